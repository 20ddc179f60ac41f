"""``clperf.core.extents``: the whole expression a finding's one-character position stands for."""

from __future__ import annotations

from clperf.core.extents import Extents, extend

SOURCE = """__kernel void k(__global float *a, __global float *out, int n) {
    int i = get_global_id(0);
    for (int j = 0; j < 8; j++)
        out[i * n + j] = a[i*n+j][0] + a[i].x * 2;
    while (i < n) { i++; }
    do { i--; } while (i);
    barrier(CLK_LOCAL_MEM_FENCE); // a `comment`
}"""
LINES = SOURCE.split("\n")


def covered(line: int, column: int) -> str:
    l0, c0, l1, c1 = Extents(SOURCE).of(line, column)
    assert l0 == l1 == line, (l0, l1)
    return LINES[line - 1][c0 - 1:c1 - 1]


def test_an_access_runs_to_its_closing_bracket_and_a_field_or_second_index_with_it() -> None:
    assert covered(4, 9) == "out[i * n + j]"
    assert covered(4, 26) == "a[i*n+j][0]"
    assert covered(4, 40) == "a[i].x"


def test_a_store_reported_at_its_operator_is_the_place_assigned() -> None:
    assert covered(4, 24) == "out[i * n + j]"


def test_a_loop_is_its_header_and_a_call_runs_to_its_parenthesis() -> None:
    assert covered(3, 5) == "for (int j = 0; j < 8; j++)"
    assert covered(5, 5) == "while (i < n)"
    assert covered(6, 5) == "do"
    assert covered(7, 5) == "barrier(CLK_LOCAL_MEM_FENCE)"


def test_other_positions_are_one_token_or_one_character() -> None:
    assert covered(4, 13) == "i"
    assert covered(4, 39) == " "  # between tokens: the character the position names
    assert Extents(SOURCE).of(99, 1) == (99, 1, 99, 2)  # past the text: still a non-empty range
    assert Extents(SOURCE).of(4, 500) == (4, 500, 4, 501)


def test_extend_parses_once_for_every_position_and_keeps_their_order() -> None:
    assert extend(SOURCE, [(3, 5), (4, 9)]) == [(3, 5, 3, 32), (4, 9, 4, 23)]
