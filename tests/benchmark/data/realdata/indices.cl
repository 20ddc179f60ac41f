// Index fills: a gather through a permutation, a histogram over skewed bin indices, a check that sorted
// keys are sorted, and a copy of an arange.

__kernel void gather(__global const int* perm, __global const float* src, __global float* out, int n) {
    int i = get_global_id(0);
    int j = perm[i];
    if (j < 0 || j >= n) { out[n] = 1.0f; return; }
    out[i] = src[j];
}

__kernel void histogram(__global const uint* keys, __global uint* bins, uint nbins) {
    uint k = keys[get_global_id(0)];
    if (k >= nbins) { bins[nbins] = 1; return; }
    atomic_inc(&bins[k]);
}

__kernel void sorted_and_arange(__global const long* keys, __global const int* ramp, __global int* out, int n) {
    int i = get_global_id(0);
    if (i + 1 < n && keys[i] > keys[i + 1]) { out[n] = 1; return; }
    out[i] = ramp[i];
}
