// Does not compile.
__kernel void broken(__global float* out) {
    out[0] = undefined_name;
}

