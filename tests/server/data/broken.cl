__kernel void broken(__global float *a)
{
    int i = get_global_id(0);
    a[i] = undefined_name * 2.0f;
}
