// 5-point stencil whose edges read zeros through ternaries (no padding at all).
// clperf: --global 1024 --local 128 --arg n=1000 --arg in=1000 --arg out=1000
__kernel void blur5(__global const float* in, __global float* out, int n) {
    size_t i = get_global_id(0);
    if (i < n) {
        float l2 = i >= 2 ? in[i - 2] : 0.0f;
        float l1 = i >= 1 ? in[i - 1] : 0.0f;
        float r1 = i + 1 < n ? in[i + 1] : 0.0f;
        float r2 = i + 2 < n ? in[i + 2] : 0.0f;
        out[i] = (l2 + l1 + in[i] + r1 + r2) * 0.2f;
    }
}
