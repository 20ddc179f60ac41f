// Writes far outside its buffer: the OpenCL runtime's process dies (SIGSEGV) when this runs.
// clperf: --global 64 --local 64 --arg a=64
__kernel void wild_write(__global float *a)
{
    size_t far = (size_t)1 << 42;
    a[far * (get_global_id(0) + 1)] = 1.0f;
}
