// clperf: --global n --local 64 --arg n=4096 --arg a=n --arg b=n --arg c=n
// clperf-sweep: n=1024..16384 local=16..256
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
    int i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}

// Crashes its process for the two largest sizes: the sweep must record that and go on.
// clperf: --global n --arg n=1024 --arg out=n
// clperf-sweep: n=1024..16384
__kernel void crashy(__global float* out, int n) {
    size_t i = get_global_id(0);
    if (n >= 8192) out[i + 0x7ffffff000L] = 1.0f;
    else out[i] = 1.0f;
}

// A kernel without a sweep spec is skipped.
// clperf: --global 64
__kernel void unswept(__global float* out) {
    out[get_global_id(0)] = 0.0f;
}
