// Vector elements: a 3-point stencil over float4.
// clperf: --global 256 --local 32 --arg n=250 --arg in=250 --arg out=250
__kernel void smooth_vec(__global const float4* in, __global float4* out, int n) {
    int i = get_global_id(0);
    if (i >= 1 && i + 1 < n) {
        out[i] = (in[i - 1] + in[i] + in[i + 1]) * (float4)(1.0f / 3.0f);
    }
}
