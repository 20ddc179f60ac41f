// 3x3 box filter over ints with an early return outside the image and explicit neighbour indices.
// clperf: --global 32,32 --local 8,8 --arg width=30 --arg height=31 --arg img=930 --arg res=930
// clperf: --fill img=range:0:256
__kernel void box3(__global const int* img, __global int* res, int width, int height) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || y < 1 || x >= width - 1 || y >= height - 1) return;
    int s = img[(y - 1) * width + x - 1] + img[(y - 1) * width + x] + img[(y - 1) * width + x + 1]
          + img[y * width + x - 1] + img[y * width + x] + img[y * width + x + 1]
          + img[(y + 1) * width + x - 1] + img[(y + 1) * width + x] + img[(y + 1) * width + x + 1];
    res[y * width + x] = s / 9;
}
