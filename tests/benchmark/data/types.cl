// Every scalar type arrives with its value; every buffer type holds data of its documented fill.
// A wrong value writes one element past the end of `flag`, which the runner reports as a crash.

__kernel void scalars(__global int* flag, char a, uchar b, short c, ushort d, int e, uint f, long g, ulong h,
                      float x, double y, float4 v, int2 w, int n) {
    int bad = a != -3 || b != 200 || c != -3000 || d != 60000 || e != -100000 || f != 4000000000u
              || g != -5000000000L || h != 10000000000UL || x != 1.5f || y != 0.25
              || v.x != 2.0f || v.w != 2.0f || w.y != 7 || n != 64;
    if (bad && get_global_id(0) == 0) flag[n] = 1;
}

__kernel void buffers(__global int* flag, __global const float* f, __global const double* d,
                      __global const int* i, __global const uchar* u, __global const float4* f4,
                      __global const int* idx, __global const long* z, int n) {
    int k = get_global_id(0);
    int bad = !(f[k] >= 0.0f && f[k] < 1.0f) || !(d[k] >= 0.0 && d[k] < 1.0) || i[k] < 0 || i[k] >= 64
              || u[k] >= 64 || !(f4[k].w >= 0.0f && f4[k].w < 1.0f) || idx[k] < 10 || idx[k] >= 20
              || z[k] != 0;
    if (bad) flag[n] = 1;
}

__kernel void local_scratch(__global float* out, __local float* tmp, int n) {
    int l = get_local_id(0);
    tmp[l] = (float)l;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tmp[get_local_size(0) - 1 - l];
}
