// 3x3 convolution with a mask in constant memory, interior pixels only.
// clperf: --global 32,32 --local 16,16 --arg w=31 --arg h=30 --arg in=930 --arg mask=9 --arg out=930
__kernel void conv3(__global const float* in, __constant float* mask, __global float* out, int w, int h) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= 1 && y >= 1 && x < w - 1 && y < h - 1) {
        float acc = 0.0f;
        for (int ky = -1; ky <= 1; ky++) {
            for (int kx = -1; kx <= 1; kx++) {
                acc += mask[(ky + 1) * 3 + kx + 1] * in[(y + ky) * w + (x + kx)];
            }
        }
        out[y * w + x] = acc;
    }
}
