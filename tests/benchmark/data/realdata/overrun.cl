// Writes one element past the end of `out` at the small sizes only: in a sweep those variants run in a
// buffer allocated for the largest one, and their guard zone must still sit right after their own data.
// clperf: --global n --arg n=4096 --arg out=n
// clperf-sweep: n=256..4096
__kernel void overrun(__global int* out, int n) {
    int i = get_global_id(0);
    out[i] = i;
    if (i == 0 && n < 1024) out[n] = -1;
}
