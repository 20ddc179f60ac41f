// Family histogram_global: histograms with one global atomic per element: integer keys masked into
// 256 bins, float data scaled into a run-time number of bins, and a variant that counts 4 keys per item.

// clperf: --global n --local 256 --arg n=1048576 --arg data=n --arg hist=256
// clperf-sweep: n=1024..4194304 local=16..1024
__kernel void histg_int256(__global const uint *data, __global uint *hist, int n)
{
    int i = get_global_id(0);
    if (i < n)
        atomic_inc(&hist[data[i] & 255u]);
}

// clperf: --global n --local 256 --arg n=1048576 --arg data=n --arg hist=bins --arg bins=64
// clperf-sweep: n=1024..4194304 bins=16..4096 local=16..1024
__kernel void histg_float_bins(__global const float *data, __global int *hist, int bins, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        int b = clamp((int)(data[i] * bins), 0, bins - 1);
        atomic_add(&hist[b], 1);
    }
}

// clperf: --global n/4 --local 128 --arg n=1048576 --arg data=n/4 --arg hist=256
// clperf-sweep: n=4096..4194304 local=16..1024
__kernel void histg_uchar4(__global const uchar4 *data, __global uint *hist, int n)
{
    int i = get_global_id(0);
    if (i < n / 4) {
        uchar4 v = data[i];
        atomic_inc(&hist[v.x]);
        atomic_inc(&hist[v.y]);
        atomic_inc(&hist[v.z]);
        atomic_inc(&hist[v.w]);
    }
}
