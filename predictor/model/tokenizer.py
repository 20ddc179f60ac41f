"""The code tokenizer: byte-pair encoding trained with ``tokenizers`` on the kernels of the corpus.

OpenCL's keywords and built-ins (``__global``, ``__kernel``, ``barrier``, ``get_global_id``, ...) are whole
tokens, never split, so the encoder sees ``__local`` as one thing wherever it appears. Comments are dropped
(a ``// clperf:`` directive describes the scenario, which the model gets as numbers). The kernel being
predicted comes first, then the rest of its file (helper functions it may call), cut at ``max_len``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from clperf.core import frontend

KEYWORDS = [
    "__kernel", "kernel", "__global", "global", "__local", "local", "__constant", "constant", "__private",
    "__attribute__", "reqd_work_group_size", "restrict", "const", "volatile",
    "get_global_id", "get_local_id", "get_group_id", "get_global_size", "get_local_size", "get_num_groups",
    "barrier", "CLK_LOCAL_MEM_FENCE", "CLK_GLOBAL_MEM_FENCE", "mem_fence",
    "atomic_add", "atomic_inc", "atomic_cmpxchg", "atomic_max", "atomic_min", "atomic_xchg", "atom_add",
    "#pragma", "unroll", "for", "while", "do", "if", "else", "return", "break", "continue",
    "float", "float2", "float4", "float8", "float16", "double", "double2", "double4", "int", "int2", "int4",
    "uint", "uint4", "long", "ulong", "short", "char", "uchar", "half", "size_t", "void", "bool",
    "vload4", "vstore4", "mad", "fma", "native_sin", "native_cos", "native_exp", "sqrt", "rsqrt", "exp",
    "sin", "cos", "min", "max", "fabs", "select", "clamp", "dot",
]
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_SPLIT = r"[A-Za-z_#][A-Za-z_0-9]*|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?[fFuUlL]*|\S"


def kernel_text(source: str, kernel: str) -> str:
    """The kernel's own text first, then the rest of the file, without comments."""
    lines = source.split("\n")
    k = next((k for k in frontend.parse(source) if k.name == kernel), None)
    if k is None:
        body, rest = source, ""
    else:
        body = "\n".join(lines[k.header_line - 1:k.end_line])
        rest = "\n".join(lines[:k.header_line - 1] + lines[k.end_line:])
    clean = _COMMENT.sub(" ", body) + "\n[SEP]\n" + _COMMENT.sub(" ", rest)
    return " ".join(clean.split())


def train_tokenizer(texts: Iterable[str], vocab_size: int = 2000) -> Any:
    """A BPE tokenizer fitted on ``texts`` (the corpus) with the OpenCL keywords as whole tokens."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(_SPLIT), behavior="isolated")
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL, min_frequency=2,
                                  show_progress=False)
    tok.train_from_iterator(list(texts), trainer)
    tok.add_tokens(KEYWORDS)
    tok.add_special_tokens(SPECIAL)
    return tok


def load(path: Path) -> Any:
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(path))


def encode(tok: Any, text: str, max_len: int) -> list[int]:
    """Token ids: ``[CLS]`` + the text's tokens, cut at ``max_len``."""
    cls = tok.token_to_id("[CLS]")
    ids = tok.encode(text, add_special_tokens=False).ids
    return [cls, *ids[: max_len - 1]]
