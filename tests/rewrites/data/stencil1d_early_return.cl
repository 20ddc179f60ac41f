// Forward differences over a buffer with two elements of padding; early return past the end.
// clperf: --global 512 --local 32 --arg n=500 --arg in=502 --arg out=500 --fill in=range:-1000:1000
__kernel void diff2(__global const int* in, __global int* out, const int n) {
    const int i = get_global_id(0);
    if (i >= n) return;
    out[i] = in[i + 2] - 2 * in[i + 1] + in[i];
}
