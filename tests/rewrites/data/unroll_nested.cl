// The inner loop (5 iterations, `<=` bound) sits in an outer loop whose count is an argument.
// clperf: --global 256 --local 32 --arg rows=6 --arg m=7680 --arg out=256 --fill m=range:0:10
__kernel void nested(__global const int* m, __global int* out, int rows) {
    int i = get_global_id(0);
    int acc = 0;
    for (int r = 0; r < rows; r++) {
        int base = (r * 256 + i) * 5;
        for (int c = 1; c <= 5; c++) {
            acc = acc * 3 + m[base + c - 1];
        }
    }
    out[i] = acc;
}
