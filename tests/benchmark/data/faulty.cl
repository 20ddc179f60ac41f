// Kernels that misbehave on purpose: each must end as a status, never take the caller down.

__kernel void fine(__global float* out, int n) {
    int i = get_global_id(0);
    if (i < n) out[i] = 2.0f * i;
}

// Writes through a pointer far outside any allocation: a segfault on PoCL, a fault on a GPU.
__kernel void wild(__global float* out) {
    size_t i = get_global_id(0);
    out[i + 0x7ffffff000L] = 1.0f;
}

// Writes 300 elements past the end of its buffer (within the runner's guard zone).
__kernel void past_end(__global float* out) {
    int i = get_global_id(0);
    out[i + 300] = 1.0f;
}

// Never ends: the loop condition depends on data the loop never changes.
__kernel void forever(__global float* out) {
    int i = 0;
    while (out[0] > -1.0f) { i++; }
    out[1] = (float)i;
}

// Same signature as `fine`, different output: a reference check must notice.
__kernel void fine_off(__global float* out, int n) {
    int i = get_global_id(0);
    if (i < n) out[i] = 2.0f * i + (i == 5 ? 1.0f : 0.0f);
}
