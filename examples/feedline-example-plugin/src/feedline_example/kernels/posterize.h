/* The entry point of posterize.cu, read by cffi (plain C declarations only). */
int example_posterize(int samples, int64_t max_size, const int64_t *sizes,
                      const uint8_t *const *inputs, uint8_t *const *outputs,
                      const uint8_t *masks, void *stream);
