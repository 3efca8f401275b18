/* feedline's 8-bit sRGB <-> CIE Lab conversions, bit for bit OpenCV's cvtColor with
 * COLOR_RGB2Lab and COLOR_Lab2RGB on uint8 images (D65 white, sRGB gamma).
 *
 * OpenCV converts 8-bit pixels in integers: RGB -> Lab through a gamma table (256 entries,
 * 3 fractional bits), a fixed-point matrix (12 bits) and a cube-root table (3072 entries, 15
 * fractional bits); Lab -> RGB through tables of Y and f(Y) per L, a closed form for X and Z
 * from f(X) and f(Z), a fixed-point matrix (14 bits) and an inverse-gamma table (4096 entries).
 * OpenCV builds the tables once with its software floating point; fl_lab_init builds the same
 * values with IEEE arithmetic (the library builds with -ffp-contract=off) and the C library's
 * pow and cbrt: correctly rounded steps give OpenCV's results except one cube-root entry, where
 * OpenCV's own single-precision cube root lands one unit below the nearest value (entry 324,
 * 17745.5 exactly, which OpenCV rounds down). Checked against the installed OpenCV over every
 * 8-bit RGB colour and every Lab triple by the tests, and on a probe image at first use.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "feedline_cpu.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

enum {
    XYZ_SHIFT = 12,     /* fixed-point bits of the RGB -> XYZ matrix */
    GAMMA_SHIFT = 3,    /* fractional bits of the gamma table */
    LAB_SHIFT2 = 15,    /* fractional bits of the cube-root table */
    CBRT_SIZE = 3072,   /* 256 * 3 / 2 << GAMMA_SHIFT */
    BASE_SHIFT = 14,    /* fractional bits of Y, f(Y), X and Z on the way back */
    BASE = 1 << BASE_SHIFT,
    INV_GAMMA_SIZE = 4096,
    RGB_SHIFT = 14,     /* XYZ_SHIFT + BASE_SHIFT - 12: the XYZ -> RGB descale */
    MIN_AB = -8145,     /* the smallest f(X) or f(Z) index */
};

/* int32 so that AVX2 can gather them */
static int32_t gamma_table[256];
static int32_t cbrt_table[CBRT_SIZE];
static int32_t inv_gamma_table[INV_GAMMA_SIZE];
static int32_t y_of_l[256], fy_of_l[256];
static int32_t y_fy_of_l[256]; /* both in one word (y: low 16 bits), one gather for both */
static int32_t to_xyz[9];   /* rows X, Y, Z over columns R, G, B, divided by the white point */
static int32_t to_rgb[9];   /* rows R, G, B over columns X, Y, Z, times the white point */
static int ready;

static double from_bits(uint64_t bits) {
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* sRGB's transfer function and its inverse in double precision, as OpenCV evaluates them
 * (thresholds and constants as exact ratios of integers), rounded to float. */
static float linear_from_srgb(float x) {
    const double xd = x;
    return (float)(xd <= 809.0 / 20000.0 ? xd / (323.0 / 25.0)
                                        : pow((xd + 11.0 / 200.0) / (1.0 + 11.0 / 200.0),
                                              12.0 / 5.0));
}

static float srgb_from_linear(float x) {
    const double xd = x;
    return (float)(xd <= 7827.0 / 2500000.0
                       ? xd * (323.0 / 25.0)
                       : pow(xd, 1.0 / (12.0 / 5.0)) * (1.0 + 11.0 / 200.0) - 11.0 / 200.0);
}

int fl_lab_init(void) {
    if (__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) return 0;
    /* sRGB -> XYZ and back (D65), and the D65 white point, as OpenCV stores them */
    static const uint64_t to_xyz_bits[9] = {
        0x3fda65a14488c60d, 0x3fd6e297396d0918, 0x3fc71819d2391d58,
        0x3fcb38cda6e75ff6, 0x3fe6e297396d0918, 0x3fb279aae6c8f755,
        0x3f93cc4ac6cdaf4b, 0x3fbe836eb4e98138, 0x3fee68427418d691};
    static const uint64_t to_rgb_bits[9] = {
        0x4009ec804102ff8f, 0xbff8982a9930be0e, 0xbfdfe7ff583a53b9,
        0xbfef042528ae74f3, 0x3ffe040f23897204, 0x3fa546d3f9e7b80b,
        0x3fac7de5082cf52c, 0xbfca1e14bdfd2631, 0x3ff0eabef06b3786};
    const double white[3] = {from_bits(0x3fee6a22b3892ee8), 1.0, from_bits(0x3ff16b8950763a19)};
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
            const double xyz = from_bits(to_xyz_bits[i * 3 + j]);
            const double rgb = from_bits(to_rgb_bits[j * 3 + i]);
            to_xyz[i * 3 + j] = (int32_t)lrint(4096.0 * xyz / white[i]);
            to_rgb[j * 3 + i] = (int32_t)lrint(4096.0 * rgb * white[i]);
        }
    }
    for (int i = 0; i < 256; ++i) {
        const float x = (float)i / 255.0f;
        gamma_table[i] = (int32_t)lrintf((float)(255 << GAMMA_SHIFT) * linear_from_srgb(x));
    }
    for (int i = 0; i < INV_GAMMA_SIZE; ++i) {
        const float x = (1.0f / INV_GAMMA_SIZE) * (float)i;
        inv_gamma_table[i] = (int32_t)lrintf(255.0f * srgb_from_linear(x));
    }
    const float threshold = 216.0f / 24389.0f, slope = 841.0f / 108.0f, bias = 16.0f / 116.0f;
    const float step = 1.0f / (255.0f * (float)(1 << GAMMA_SHIFT));
    for (int i = 0; i < CBRT_SIZE; ++i) {
        const float x = step * (float)i;
        const float f = x < threshold ? fmaf(x, slope, bias) : (float)cbrt((double)x);
        cbrt_table[i] = (int32_t)lrintf((float)(1 << LAB_SHIFT2) * f);
    }
    cbrt_table[324] -= 1; /* OpenCV's cube root of 324 / 2040 (see the top of this file) */
    for (int i = 0; i < 256; ++i) {
        if (i <= 20) {
            y_of_l[i] = (int32_t)lrintf((float)(i * BASE * 20 * 9) / (float)(17 * 29 * 29 * 29));
            fy_of_l[i] = (int32_t)lrintf(
                (float)BASE * (16.0f / 116.0f + (float)(i * 5) / (float)(3 * 17 * 29)));
        } else {
            const float fy = (float)(i * 100 * BASE) / (float)(255 * 116) +
                             (float)(16 * BASE) / 116.0f;
            const float fy2 = fy * fy;
            fy_of_l[i] = (int32_t)lrintf(fy);
            y_of_l[i] = (int32_t)lrintf(fy2 * fy / (float)(BASE * BASE));
        }
    }
    for (int i = 0; i < 256; ++i) y_fy_of_l[i] = y_of_l[i] | fy_of_l[i] << 16;
    __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
    return 0;
}

/* X or Z (BASE = 1) from f(X) or f(Z) (BASE = 1): the linear segment below f = 6/29, the cube
 * above, in OpenCV's integer steps (C division truncates toward zero, as OpenCV's does). */
static inline int32_t xz_from_f(int32_t f) {
    if (f <= 3390) return f * 108 / 841 - BASE * 16 / 116 * 108 / 841;
    return f * f / BASE * f / BASE;
}

static inline uint8_t saturate_u8(int32_t v) {
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

static inline int32_t clamp_index(int32_t v) {
    return v < 0 ? 0 : v > INV_GAMMA_SIZE - 1 ? INV_GAMMA_SIZE - 1 : v;
}

/* The integer steps of both conversions, one pixel. */
static inline void lab_of_pixel(const uint8_t *rgb, uint8_t *l, uint8_t *a, uint8_t *b) {
    const int32_t l_scale = (116 * 255 + 50) / 100;
    const int32_t l_shift = -((16 * 255 * (1 << LAB_SHIFT2) + 50) / 100);
    const int32_t half_xyz = 1 << (XYZ_SHIFT - 1), half_lab = 1 << (LAB_SHIFT2 - 1);
    const int32_t *c = to_xyz;
    const int32_t r = gamma_table[rgb[0]], g = gamma_table[rgb[1]], bl = gamma_table[rgb[2]];
    const int32_t fx = cbrt_table[(r * c[0] + g * c[1] + bl * c[2] + half_xyz) >> XYZ_SHIFT];
    const int32_t fy = cbrt_table[(r * c[3] + g * c[4] + bl * c[5] + half_xyz) >> XYZ_SHIFT];
    const int32_t fz = cbrt_table[(r * c[6] + g * c[7] + bl * c[8] + half_xyz) >> XYZ_SHIFT];
    *l = saturate_u8((l_scale * fy + l_shift + half_lab) >> LAB_SHIFT2);
    *a = saturate_u8((500 * (fx - fy) + (128 << LAB_SHIFT2) + half_lab) >> LAB_SHIFT2);
    *b = saturate_u8((200 * (fy - fz) + (128 << LAB_SHIFT2) + half_lab) >> LAB_SHIFT2);
}

static inline void rgb_of_pixel(uint8_t l, uint8_t a, uint8_t b, uint8_t *rgb) {
    const int32_t half = 1 << (RGB_SHIFT - 1);
    const int32_t *c = to_rgb;
    const int32_t y = y_of_l[l], fy = fy_of_l[l];
    const int32_t a_div = ((5 * a * 53687 + (1 << 7)) >> 13) - 128 * BASE / 500;
    const int32_t b_div = ((b * 41943 + (1 << 4)) >> 9) - 128 * BASE / 200 + 1;
    const int32_t x = xz_from_f(fy + a_div), z = xz_from_f(fy - b_div);
    const int32_t r = (c[0] * x + c[1] * y + c[2] * z + half) >> RGB_SHIFT;
    const int32_t g = (c[3] * x + c[4] * y + c[5] * z + half) >> RGB_SHIFT;
    const int32_t bl = (c[6] * x + c[7] * y + c[8] * z + half) >> RGB_SHIFT;
    rgb[0] = (uint8_t)inv_gamma_table[clamp_index(r)];
    rgb[1] = (uint8_t)inv_gamma_table[clamp_index(g)];
    rgb[2] = (uint8_t)inv_gamma_table[clamp_index(bl)];
}

#if defined(__AVX2__)
/* 8 pixels at a time: the same integer steps in 32-bit lanes, tables gathered. */

/* Shuffle masks that pick bytes k, k + 3, ..., k + 21 of 24 interleaved bytes held as lo
 * (bytes 0-15) and hi (16-23) into 8 bytes. */
static inline void plane_masks(int k, __m128i *from_lo, __m128i *from_hi) {
    int8_t m_lo[16], m_hi[16];
    for (int i = 0; i < 16; ++i) m_lo[i] = m_hi[i] = -1;
    for (int i = 0; i < 8; ++i) {
        const int at = k + 3 * i;
        if (at < 16)
            m_lo[i] = (int8_t)at;
        else
            m_hi[i] = (int8_t)(at - 16);
    }
    *from_lo = _mm_loadu_si128((__m128i *)m_lo);
    *from_hi = _mm_loadu_si128((__m128i *)m_hi);
}

static inline __m256i plane_of(__m128i lo, __m128i hi, __m128i from_lo, __m128i from_hi) {
    return _mm256_cvtepu8_epi32(
        _mm_or_si128(_mm_shuffle_epi8(lo, from_lo), _mm_shuffle_epi8(hi, from_hi)));
}

/* 8 int32 lanes (each in 0..255) to 8 bytes in the low half. */
static inline __m128i bytes_of(__m256i v) {
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    return _mm_packus_epi16(w, w);
}

static inline __m256i descale(__m256i v, __m256i half, int shift) {
    return _mm256_srai_epi32(_mm256_add_epi32(v, half), shift);
}

static inline __m256i dot3(__m256i p, __m256i q, __m256i r, const int32_t *c) {
    return _mm256_add_epi32(_mm256_add_epi32(_mm256_mullo_epi32(p, _mm256_set1_epi32(c[0])),
                                             _mm256_mullo_epi32(q, _mm256_set1_epi32(c[1]))),
                            _mm256_mullo_epi32(r, _mm256_set1_epi32(c[2])));
}

static int64_t lab_of_pixels_avx2(const uint8_t *rgb, int64_t count, uint8_t *l, uint8_t *a,
                                  uint8_t *b) {
    const __m256i half_xyz = _mm256_set1_epi32(1 << (XYZ_SHIFT - 1));
    const __m256i half_lab = _mm256_set1_epi32(1 << (LAB_SHIFT2 - 1));
    const __m256i l_scale = _mm256_set1_epi32((116 * 255 + 50) / 100);
    const __m256i l_shift = _mm256_set1_epi32(-((16 * 255 * (1 << LAB_SHIFT2) + 50) / 100));
    const __m256i ab_shift = _mm256_set1_epi32(128 << LAB_SHIFT2);
    __m128i lo_masks[3], hi_masks[3];
    for (int k = 0; k < 3; ++k) plane_masks(k, &lo_masks[k], &hi_masks[k]);
    int64_t i = 0;
    for (; i + 8 <= count; i += 8) {
        const uint8_t *p = rgb + 3 * i;
        const __m128i lo = _mm_loadu_si128((const __m128i *)p);
        const __m128i hi = _mm_loadl_epi64((const __m128i *)(p + 16));
        const __m256i r8 = plane_of(lo, hi, lo_masks[0], hi_masks[0]);
        const __m256i r = _mm256_i32gather_epi32(gamma_table, r8, 4);
        const __m256i g8 = plane_of(lo, hi, lo_masks[1], hi_masks[1]);
        const __m256i g = _mm256_i32gather_epi32(gamma_table, g8, 4);
        const __m256i bl8 = plane_of(lo, hi, lo_masks[2], hi_masks[2]);
        const __m256i bl = _mm256_i32gather_epi32(gamma_table, bl8, 4);
        const __m256i ix = descale(dot3(r, g, bl, to_xyz), half_xyz, XYZ_SHIFT);
        const __m256i iy = descale(dot3(r, g, bl, to_xyz + 3), half_xyz, XYZ_SHIFT);
        const __m256i iz = descale(dot3(r, g, bl, to_xyz + 6), half_xyz, XYZ_SHIFT);
        const __m256i fx = _mm256_i32gather_epi32(cbrt_table, ix, 4);
        const __m256i fy = _mm256_i32gather_epi32(cbrt_table, iy, 4);
        const __m256i fz = _mm256_i32gather_epi32(cbrt_table, iz, 4);
        const __m256i vl = descale(_mm256_add_epi32(_mm256_mullo_epi32(fy, l_scale), l_shift),
                                   half_lab, LAB_SHIFT2);
        const __m256i va = descale(
            _mm256_add_epi32(_mm256_mullo_epi32(_mm256_sub_epi32(fx, fy), _mm256_set1_epi32(500)),
                             ab_shift),
            half_lab, LAB_SHIFT2);
        const __m256i vb = descale(
            _mm256_add_epi32(_mm256_mullo_epi32(_mm256_sub_epi32(fy, fz), _mm256_set1_epi32(200)),
                             ab_shift),
            half_lab, LAB_SHIFT2);
        _mm_storel_epi64((__m128i *)(l + i), bytes_of(vl));
        _mm_storel_epi64((__m128i *)(a + i), bytes_of(va));
        _mm_storel_epi64((__m128i *)(b + i), bytes_of(vb));
    }
    return i;
}

/* xz_from_f on 8 lanes: the linear segment's truncating division through float (f * 108 is
 * exact in float and no quotient lies within float's error of an integer it is not). */
static inline __m256i xz_from_f_avx2(__m256i f) {
    const __m256 scaled = _mm256_cvtepi32_ps(_mm256_mullo_epi32(f, _mm256_set1_epi32(108)));
    const __m256 linear_f = _mm256_div_ps(scaled, _mm256_set1_ps(841.0f));
    const __m256i linear = _mm256_sub_epi32(_mm256_cvttps_epi32(linear_f),
                                            _mm256_set1_epi32(BASE * 16 / 116 * 108 / 841));
    const __m256i square = _mm256_srai_epi32(_mm256_mullo_epi32(f, f), BASE_SHIFT);
    const __m256i cube = _mm256_srai_epi32(_mm256_mullo_epi32(square, f), BASE_SHIFT);
    const __m256i use_linear = _mm256_cmpgt_epi32(_mm256_set1_epi32(3391), f);
    return _mm256_blendv_epi8(cube, linear, use_linear);
}

static inline __m256i rgb_lane(__m256i x, __m256i y, __m256i z, const int32_t *c) {
    const __m256i half = _mm256_set1_epi32(1 << (RGB_SHIFT - 1));
    const __m256i v = descale(dot3(x, y, z, c), half, RGB_SHIFT);
    const __m256i clamped = _mm256_max_epi32(
        _mm256_min_epi32(v, _mm256_set1_epi32(INV_GAMMA_SIZE - 1)), _mm256_setzero_si256());
    return _mm256_i32gather_epi32(inv_gamma_table, clamped, 4);
}

static int64_t rgb_of_pixels_avx2(const uint8_t *l, const uint8_t *a, const uint8_t *b,
                                  int64_t count, uint8_t *rgb) {
    /* output byte k of 24 takes channel k % 3 of pixel k / 3; r and g come in one register
     * (r: bytes 0-7, g: 8-15), b in another */
    int8_t m_rg_lo[16], m_b_lo[16], m_rg_hi[16], m_b_hi[16];
    for (int k = 0; k < 24; ++k) {
        const int channel = k % 3, pixel = k / 3;
        int8_t *rg = k < 16 ? m_rg_lo : m_rg_hi, *bb = k < 16 ? m_b_lo : m_b_hi;
        const int at = k % 16;
        rg[at] = channel == 2 ? -1 : (int8_t)(channel * 8 + pixel);
        bb[at] = channel == 2 ? (int8_t)pixel : -1;
    }
    for (int k = 8; k < 16; ++k) m_rg_hi[k] = m_b_hi[k] = -1;
    const __m128i rg_lo = _mm_loadu_si128((__m128i *)m_rg_lo);
    const __m128i b_lo = _mm_loadu_si128((__m128i *)m_b_lo);
    const __m128i rg_hi = _mm_loadu_si128((__m128i *)m_rg_hi);
    const __m128i b_hi = _mm_loadu_si128((__m128i *)m_b_hi);
    int64_t i = 0;
    for (; i + 8 <= count; i += 8) {
        const __m256i vl = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(l + i)));
        const __m256i va = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(a + i)));
        const __m256i vb = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(b + i)));
        const __m256i y_fy = _mm256_i32gather_epi32(y_fy_of_l, vl, 4);
        const __m256i y = _mm256_and_si256(y_fy, _mm256_set1_epi32(0xFFFF));
        const __m256i fy = _mm256_srli_epi32(y_fy, 16);
        const __m256i a_scaled = _mm256_mullo_epi32(va, _mm256_set1_epi32(5 * 53687));
        const __m256i a_div =
            _mm256_sub_epi32(descale(a_scaled, _mm256_set1_epi32(1 << 7), 13),
                             _mm256_set1_epi32(128 * BASE / 500));
        const __m256i b_scaled = _mm256_mullo_epi32(vb, _mm256_set1_epi32(41943));
        const __m256i b_div =
            _mm256_sub_epi32(descale(b_scaled, _mm256_set1_epi32(1 << 4), 9),
                             _mm256_set1_epi32(128 * BASE / 200 - 1));
        const __m256i x = xz_from_f_avx2(_mm256_add_epi32(fy, a_div));
        const __m256i z = xz_from_f_avx2(_mm256_sub_epi32(fy, b_div));
        const __m128i r8 = bytes_of(rgb_lane(x, y, z, to_rgb));
        const __m128i g8 = bytes_of(rgb_lane(x, y, z, to_rgb + 3));
        const __m128i b8 = bytes_of(rgb_lane(x, y, z, to_rgb + 6));
        const __m128i rg = _mm_unpacklo_epi64(r8, g8);
        uint8_t *out = rgb + 3 * i;
        _mm_storeu_si128((__m128i *)out,
                         _mm_or_si128(_mm_shuffle_epi8(rg, rg_lo), _mm_shuffle_epi8(b8, b_lo)));
        _mm_storel_epi64((__m128i *)(out + 16),
                         _mm_or_si128(_mm_shuffle_epi8(rg, rg_hi), _mm_shuffle_epi8(b8, b_hi)));
    }
    return i;
}
#endif

void fl_rgb_to_lab_u8(const uint8_t *rgb, int64_t count, uint8_t *l, uint8_t *a, uint8_t *b) {
    int64_t i = 0;
#if defined(__AVX2__)
    i = lab_of_pixels_avx2(rgb, count, l, a, b);
#endif
    for (; i < count; ++i) lab_of_pixel(rgb + 3 * i, l + i, a + i, b + i);
}

void fl_lab_to_rgb_u8(const uint8_t *l, const uint8_t *a, const uint8_t *b, int64_t count,
                      uint8_t *rgb) {
    int64_t i = 0;
#if defined(__AVX2__)
    i = rgb_of_pixels_avx2(l, a, b, count, rgb);
#endif
    for (; i < count; ++i) rgb_of_pixel(l[i], a[i], b[i], rgb + 3 * i);
}
