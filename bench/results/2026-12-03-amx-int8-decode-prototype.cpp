// A standalone prototype, as measured on 2026-12-03 (docs/performance.md, "AMX-INT8 tiles for an
// int8 cache"); not part of the build. int8 paged decoding on AMX-INT8 tiles for decode_paged's
// shape (B16 H32 KVH8 D128, pages of 16 shuffled, kv lengths 512-8192, two copies cycled, f32
// queries and output, a float32 scale per token and kv head):
// - q.k as S^T = K Q^T: a page's K rows of one kv head are A tiles as they lie in the pool (16 tokens,
//   64 bytes, 1 KiB apart); each query row is rounded to a 24-bit integer against its largest element
//   and split into three signed bytes, the B tile's columns (3 pieces x 4 rows of the group); the
//   pieces' int32 sums are recombined in float.
// - online softmax per 64 tokens, a row's scores in lanes (the C tiles' columns read by gathers);
// - p.V as O = P V: the weights times V's scales rounded to 24 bits against each row's largest in the
//   chunk, three signed-byte rows of the A tile per query row; V's rows interleaved by 4 tokens
//   (vpunpck{l,h}bw, vpunpck{l,h}wd) into the B tiles; the int32 results recombined and accumulated
//   in float (output dims permuted, put back at the end of the task).
// - tasks of 512 keys of a sequence over every kv head, merged by their maxima and sums.
// Build: g++ -O2 -march=sapphirerapids -std=c++20 -pthread FILE -o proto
// Run:   ./proto THREADS [PREFETCH_MODE [CHUNKS_AHEAD [STEP]]]  (mode 5 1: the best measured;
//        SMALL=1 for one sequence of 600-700 keys held in L2, phases in TSC ticks per token and kv head)
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

constexpr int H = 32, KVH = 8, G = 4, D = 128, P = 16;
constexpr int ROW = KVH * D;            // bytes of a token's row
constexpr int CHUNK = 64;               // tokens per p.V step
constexpr int SPLIT = 512;              // tokens per task
constexpr float CODE = 8000000.0f;      // largest |code| of a 24-bit number in 3 signed bytes

struct call {
  int B, max_pages;
  const std::int8_t* k;
  const std::int8_t* v;
  const float *ks, *vs;
  const int *table, *len;
  const float* q;  // (B, H, D)
  float* out;      // (B, H, D)
  float scale;
  // partials
  float* part_o;   // (tasks, H, D)
  float* part_ml;  // (tasks, H, 2)
  std::int8_t* qtiles; float* qscales;
  std::vector<int> task_b, task_start, first_task;
  std::atomic<int> next{0};
};

static thread_local unsigned long long ph[6];
static unsigned long long ph_main[6];
static std::thread::id main_id;
static int pf_mode = 1, pf_chunks = 2, pf_step = 64;
alignas(64) static std::int8_t zero_page[P * ROW];

static void tile_config() {
  struct alignas(64) {
    std::uint8_t palette, start_row, reserved[14];
    std::uint16_t bytes_per_row[16];
    std::uint8_t rows[16];
  } c = {};
  c.palette = 1;
  for (int t = 0; t < 8; ++t) c.bytes_per_row[t] = 64, c.rows[t] = 16;
  _tile_loadconfig(&c);
}

// 24-bit codes split into three signed bytes: x = hi * 65536 + mid * 256 + lo.
static inline void split3(__m512i x, __m512i& hi, __m512i& mid, __m512i& lo) {
  const __m512i c128 = _mm512_set1_epi32(128), m255 = _mm512_set1_epi32(255);
  lo = _mm512_sub_epi32(_mm512_and_si512(_mm512_add_epi32(x, c128), m255), c128);
  __m512i r = _mm512_srai_epi32(_mm512_sub_epi32(x, lo), 8);
  mid = _mm512_sub_epi32(_mm512_and_si512(_mm512_add_epi32(r, c128), m255), c128);
  hi = _mm512_srai_epi32(_mm512_sub_epi32(r, mid), 8);
}

static inline float hmax(__m512 v) { return _mm512_reduce_max_ps(v); }

static inline __m512 exp512(__m512 x) {
  // exp(x) for x <= 0, x >= -87: 2^(x log2 e) by a degree-6 polynomial on the fraction.
  const __m512 log2e = _mm512_set1_ps(1.44269504f);
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.0f));
  __m512 t = _mm512_mul_ps(x, log2e);
  __m512 fi = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  __m512 f = _mm512_sub_ps(t, fi);
  __m512 p = _mm512_set1_ps(1.5353362e-4f);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.3398874e-3f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.6180399e-3f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.5503406e-2f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.4022652e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.9314712e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, fi);
}

struct alignas(64) scratch {
  std::int8_t qt[KVH][2][16 * 64];      // q's B tiles per kv head and half
  std::int32_t c[4][KVH][16 * 16];      // q.k results per page and head
  float s[KVH][G][CHUNK];               // scores of the chunk
  std::int8_t pa[KVH][16 * 64];         // P's A tile per head (rows piece*4+g, 64 tokens)
  std::int8_t vb[8][16 * 64];           // V's B tiles of one head (k, half)
  std::int32_t cv[16 * 16];
  float o[H][D];                        // permuted dims
  float m[H], l[H], qscale[H], pscale[KVH][G];
};

static void prepare_q(call& cl, int b) {
  struct { std::int8_t qt[KVH][2][16 * 64]; float qscale[H]; } w_, *wp = &w_;
  auto& w = *wp;
  const float* q = cl.q + std::int64_t(b) * H * D;
  // q's codes and tiles
  for (int h = 0; h < KVH; ++h) {
    std::memset(w.qt[h], 0, sizeof w.qt[h]);
    for (int g = 0; g < G; ++g) {
      const float* row = q + (h * G + g) * D;
      float mx = 0;
      for (int d = 0; d < D; ++d) mx = std::max(mx, std::fabs(row[d]));
      const float s = mx > 0 ? mx / CODE : 1.0f;
      w.qscale[h * G + g] = s;
      for (int d = 0; d < D; ++d) {
        int x = int(std::lrintf(row[d] / s));
        int lo = ((x + 128) & 255) - 128, r = (x - lo) >> 8, mid = ((r + 128) & 255) - 128, hi = (r - mid) >> 8;
        const int half = d / 64, rr = (d % 64) / 4, kk = d % 4;
        std::int8_t* t = w.qt[h][half] + rr * 64;
        t[(0 * 4 + g) * 4 + kk] = std::int8_t(hi);
        t[(1 * 4 + g) * 4 + kk] = std::int8_t(mid);
        t[(2 * 4 + g) * 4 + kk] = std::int8_t(lo);
      }
    }
  }
  std::memcpy(cl.qtiles + std::size_t(b) * sizeof w.qt, w.qt, sizeof w.qt);
  std::memcpy(cl.qscales + b * H, w.qscale, sizeof w.qscale);
}

static void run_task(call& cl, int task, scratch& w) {
  const int b = cl.task_b[task], start = cl.task_start[task];
  const int len = cl.len[b];
  const int end = std::min(len, start + SPLIT);
  const float* q = cl.q + std::int64_t(b) * H * D;
  std::memcpy(w.qt, cl.qtiles + std::size_t(b) * sizeof w.qt, sizeof w.qt);
  std::memcpy(w.qscale, cl.qscales + b * H, sizeof w.qscale);
  for (int r = 0; r < H; ++r) w.m[r] = -1e30f, w.l[r] = 0;
  std::memset(w.o, 0, sizeof w.o);
  std::memset(w.pa, 0, sizeof w.pa);
  const int* table = cl.table + std::int64_t(b) * cl.max_pages;
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (int c0 = start; c0 < end; c0 += CHUNK) {
    const std::int8_t* kp[4];
    const std::int8_t* vp[4];
    const float *ksp[4], *vsp[4];
    for (int pi = 0; pi < 4; ++pi) {
      const int tok = c0 + pi * P;
      if (tok < end) {
        const std::int64_t page = table[tok / P];
        kp[pi] = cl.k + page * P * ROW;
        vp[pi] = cl.v + page * P * ROW;
        ksp[pi] = cl.ks + page * P * KVH;
        vsp[pi] = cl.vs + page * P * KVH;
      } else {
        kp[pi] = vp[pi] = zero_page;
        ksp[pi] = vsp[pi] = nullptr;
      }
      // prefetch the chunk after next's pages
      const int ahead = c0 + pf_chunks * CHUNK + pi * P;
      if (pf_mode && pf_mode < 4 && ahead < end) {
        const std::int64_t page = table[ahead / P];
        const char* kpp = reinterpret_cast<const char*>(cl.k + page * P * ROW);
        const char* vpp = reinterpret_cast<const char*>(cl.v + page * P * ROW);
        if (pf_mode == 1) for (int x = 0; x < P * ROW; x += pf_step) _mm_prefetch(kpp + x, _MM_HINT_T0), _mm_prefetch(vpp + x, _MM_HINT_T0);
        else if (pf_mode == 2) for (int x = 0; x < P * ROW; x += pf_step) _mm_prefetch(kpp + x, _MM_HINT_T2), _mm_prefetch(vpp + x, _MM_HINT_T2);
        else if (pf_mode == 3) for (int x = 0; x < P * ROW; x += pf_step) _mm_prefetch(kpp + x, _MM_HINT_NTA), _mm_prefetch(vpp + x, _MM_HINT_NTA);
      }
    }
    unsigned long long t_a = __rdtsc();
    const char* pfk[4] = {};
    const char* pfv[4] = {};
    if (pf_mode >= 4)
      for (int pi = 0; pi < 4; ++pi) {
        const int ahead = c0 + pf_chunks * CHUNK + pi * P;
        if (ahead < end) {
          const std::int64_t page = table[ahead / P];
          pfk[pi] = reinterpret_cast<const char*>(cl.k + page * P * ROW);
          pfv[pi] = reinterpret_cast<const char*>(cl.v + page * P * ROW);
        }
      }
    int pf_idx = 0;
    auto pf = [&](int n) {
      for (int i = 0; i < n && pf_idx < 2048; ++i, ++pf_idx) {
        const int pi = pf_idx >> 9, which = (pf_idx >> 8) & 1, off = (pf_idx & 255) * 64;
        const char* ptr = which ? pfv[pi] : pfk[pi];
        if (ptr) { if (pf_mode == 4) _mm_prefetch(ptr + off, _MM_HINT_T0); else _mm_prefetch(ptr + off, _MM_HINT_T2); }
      }
    };
    // q.k
    for (int pi = 0; pi < 4; ++pi) {
      if (kp[pi] == zero_page) continue;
      for (int h = 0; h < KVH; ++h) {
        pf(16);
        _tile_loadd(0, kp[pi] + h * D, ROW);
        _tile_loadd(1, kp[pi] + h * D + 64, ROW);
        _tile_loadd(2, w.qt[h][0], 64);
        _tile_loadd(3, w.qt[h][1], 64);
        _tile_zero(4);
        _tile_dpbssd(4, 0, 2);
        _tile_dpbssd(4, 1, 3);
        _tile_stored(4, w.c[pi][h], 64);
      }
    }
    unsigned long long t_b = __rdtsc(); ph[0] += t_b - t_a;
    // scores: columns of each C (transposed by gathers for the prototype)
    const __m512i cols = _mm512_mullo_epi32(lane, _mm512_set1_epi32(16));
    const __m512i scale_idx = _mm512_mullo_epi32(lane, _mm512_set1_epi32(KVH));
    for (int h = 0; h < KVH; ++h) {
      for (int pi = 0; pi < 4; ++pi) {
        pf(8);
        const int tok = c0 + pi * P;
        if (kp[pi] == zero_page) {
          for (int g = 0; g < G; ++g) _mm512_store_ps(&w.s[h][g][pi * 16], _mm512_set1_ps(-1e30f));
          continue;
        }
        const __m512 ks = _mm512_i32gather_ps(scale_idx, ksp[pi] + h, 4);
        const __mmask16 live = _mm512_cmplt_epi32_mask(_mm512_add_epi32(lane, _mm512_set1_epi32(tok)), _mm512_set1_epi32(end));
        for (int g = 0; g < G; ++g) {
          const __m512 hi = _mm512_cvtepi32_ps(_mm512_i32gather_epi32(cols, w.c[pi][h] + g, 4));
          const __m512 mid = _mm512_cvtepi32_ps(_mm512_i32gather_epi32(cols, w.c[pi][h] + 4 + g, 4));
          const __m512 lo = _mm512_cvtepi32_ps(_mm512_i32gather_epi32(cols, w.c[pi][h] + 8 + g, 4));
          __m512 dot = _mm512_fmadd_ps(hi, _mm512_set1_ps(65536.0f), _mm512_fmadd_ps(mid, _mm512_set1_ps(256.0f), lo));
          __m512 s = _mm512_mul_ps(_mm512_mul_ps(dot, ks), _mm512_set1_ps(w.qscale[h * G + g] * cl.scale));
          _mm512_store_ps(&w.s[h][g][pi * 16], _mm512_mask_blend_ps(live, _mm512_set1_ps(-1e30f), s));
        }
      }
    }
    unsigned long long t_c = __rdtsc(); ph[1] += t_c - t_b;
    // softmax and P's tiles
    for (int h = 0; h < KVH; ++h) {
      __m512 vsv[4];
      for (int pi = 0; pi < 4; ++pi)
        vsv[pi] = vsp[pi] ? _mm512_i32gather_ps(scale_idx, vsp[pi] + h, 4) : _mm512_setzero_ps();
      for (int g = 0; g < G; ++g) {
        pf(8);
        const int r = h * G + g;
        __m512 mx = _mm512_max_ps(_mm512_max_ps(_mm512_load_ps(&w.s[h][g][0]), _mm512_load_ps(&w.s[h][g][16])),
                                  _mm512_max_ps(_mm512_load_ps(&w.s[h][g][32]), _mm512_load_ps(&w.s[h][g][48])));
        const float m_new = std::max(w.m[r], hmax(mx));
        const float alpha = std::exp(w.m[r] - m_new);
        w.m[r] = m_new;
        __m512 p[4], sum = _mm512_setzero_ps(), pmx = _mm512_setzero_ps();
        for (int pi = 0; pi < 4; ++pi) {
          p[pi] = exp512(_mm512_sub_ps(_mm512_load_ps(&w.s[h][g][pi * 16]), _mm512_set1_ps(m_new)));
          sum = _mm512_add_ps(sum, p[pi]);
          p[pi] = _mm512_mul_ps(p[pi], vsv[pi]);
          pmx = _mm512_max_ps(pmx, p[pi]);
        }
        w.l[r] = w.l[r] * alpha + _mm512_reduce_add_ps(sum);
        if (alpha != 1.0f)
          for (int d = 0; d < D; d += 16) _mm512_store_ps(&w.o[r][d], _mm512_mul_ps(_mm512_load_ps(&w.o[r][d]), _mm512_set1_ps(alpha)));
        const float pm = hmax(pmx);
        const float ps = pm > 0 ? pm / CODE : 1.0f;
        w.pscale[h][g] = ps;
        const __m512 inv = _mm512_set1_ps(1.0f / ps);
        for (int pi = 0; pi < 4; ++pi) {
          __m512i x = _mm512_cvtps_epi32(_mm512_mul_ps(p[pi], inv)), hi, mid, lo;
          split3(x, hi, mid, lo);
          _mm_store_si128(reinterpret_cast<__m128i*>(w.pa[h] + (0 * 4 + g) * 64 + pi * 16), _mm512_cvtepi32_epi8(hi));
          _mm_store_si128(reinterpret_cast<__m128i*>(w.pa[h] + (1 * 4 + g) * 64 + pi * 16), _mm512_cvtepi32_epi8(mid));
          _mm_store_si128(reinterpret_cast<__m128i*>(w.pa[h] + (2 * 4 + g) * 64 + pi * 16), _mm512_cvtepi32_epi8(lo));
        }
      }
    }
    unsigned long long t_d = __rdtsc(); ph[2] += t_d - t_c;
    // p.V per head
    for (int h = 0; h < KVH; ++h) {
      for (int qd = 0; qd < 16; ++qd) {
        pf(4);
        const int pi = qd / 4, row = (qd % 4) * 4;
        const std::int8_t* base = vp[pi] + row * ROW + h * D;
        for (int half = 0; half < 2; ++half) {
          const __m512i r0 = _mm512_loadu_si512(base + half * 64);
          const __m512i r1 = _mm512_loadu_si512(base + ROW + half * 64);
          const __m512i r2 = _mm512_loadu_si512(base + 2 * ROW + half * 64);
          const __m512i r3 = _mm512_loadu_si512(base + 3 * ROW + half * 64);
          const __m512i a = _mm512_unpacklo_epi8(r0, r1), bb = _mm512_unpackhi_epi8(r0, r1);
          const __m512i c = _mm512_unpacklo_epi8(r2, r3), e = _mm512_unpackhi_epi8(r2, r3);
          _mm512_store_si512(w.vb[0 * 2 + half] + qd * 64, _mm512_unpacklo_epi16(a, c));
          _mm512_store_si512(w.vb[1 * 2 + half] + qd * 64, _mm512_unpackhi_epi16(a, c));
          _mm512_store_si512(w.vb[2 * 2 + half] + qd * 64, _mm512_unpacklo_epi16(bb, e));
          _mm512_store_si512(w.vb[3 * 2 + half] + qd * 64, _mm512_unpackhi_epi16(bb, e));
        }
      }
      unsigned long long t_e = __rdtsc(); ph[3] += t_e - t_d; t_d = t_e;
      _tile_loadd(5, w.pa[h], 64);
      for (int t = 0; t < 8; ++t) {
        pf(8);
        _tile_loadd(6, w.vb[t], 64);
        _tile_zero(7);
        _tile_dpbssd(7, 5, 6);
        _tile_stored(7, w.cv, 64);
        const int k = t / 2, half = t % 2;
        for (int g = 0; g < G; ++g) {
          const __m512 hi = _mm512_cvtepi32_ps(_mm512_load_si512(w.cv + (0 * 4 + g) * 16));
          const __m512 mid = _mm512_cvtepi32_ps(_mm512_load_si512(w.cv + (1 * 4 + g) * 16));
          const __m512 lo = _mm512_cvtepi32_ps(_mm512_load_si512(w.cv + (2 * 4 + g) * 16));
          const __m512 dot = _mm512_fmadd_ps(hi, _mm512_set1_ps(65536.0f), _mm512_fmadd_ps(mid, _mm512_set1_ps(256.0f), lo));
          float* o = &w.o[h * G + g][(k * 2 + half) * 16];
          _mm512_store_ps(o, _mm512_fmadd_ps(dot, _mm512_set1_ps(w.pscale[h][g]), _mm512_load_ps(o)));
        }
      }
      t_e = __rdtsc(); ph[4] += t_e - t_d; t_d = t_e;
    }
  }
  float* po = cl.part_o + std::int64_t(task) * H * D;
  float* pml = cl.part_ml + std::int64_t(task) * H * 2;
  for (int r = 0; r < H; ++r) {
    // un-permute: slot (k, half, col = 4L + j) holds d = 64 half + 16 L + 4 k + j
    for (int t = 0; t < 8; ++t)
      for (int col = 0; col < 16; ++col) {
        const int k = t / 2, half = t % 2, L = col / 4, j = col % 4;
        po[r * D + 64 * half + 16 * L + 4 * k + j] = w.o[r][t * 16 + col];
      }
    pml[r * 2] = w.m[r];
    pml[r * 2 + 1] = w.l[r];
  }
}

static void merge(call& cl, int b) {
  const int t0 = cl.first_task[b], t1 = cl.first_task[b + 1];
  for (int r = 0; r < H; ++r) {
    float M = -1e30f;
    for (int t = t0; t < t1; ++t) M = std::max(M, cl.part_ml[(t * H + r) * 2]);
    float L = 0;
    float acc[D] = {};
    for (int t = t0; t < t1; ++t) {
      const float f = std::exp(cl.part_ml[(t * H + r) * 2] - M);
      L += f * cl.part_ml[(t * H + r) * 2 + 1];
      for (int d = 0; d < D; ++d) acc[d] += f * cl.part_o[(std::int64_t(t) * H + r) * D + d];
    }
    for (int d = 0; d < D; ++d) cl.out[(std::int64_t(b) * H + r) * D + d] = acc[d] / L;
  }
}

static void worker(call& cl) {
  tile_config();
  static thread_local scratch* w = new scratch;
  for (;;) {
    const int t = cl.next.fetch_add(1);
    if (t >= int(cl.task_b.size())) break;
    run_task(cl, t, *w);
  }
  if (std::this_thread::get_id() == main_id) for (int i = 0; i < 6; ++i) ph_main[i] = ph[i];
  _tile_release();
}

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  if (argc > 2) pf_mode = std::atoi(argv[2]);
  if (argc > 3) pf_chunks = std::atoi(argv[3]);
  if (argc > 4) pf_step = std::atoi(argv[4]);
  main_id = std::this_thread::get_id();
  if (syscall(SYS_arch_prctl, 0x1023, 18)) { std::perror("arch_prctl"); return 1; }
  std::mt19937 rng(7);
  const bool small = std::getenv("SMALL") != nullptr;
  const int B = small ? 1 : 16;
  std::vector<int> lens(B);
  std::uniform_int_distribution<int> dist(small ? 600 : 512, small ? 700 : 8192);
  for (int& l : lens) l = dist(rng);
  int pages = 0, max_pages = 0;
  for (int l : lens) pages += (l + P - 1) / P, max_pages = std::max(max_pages, (l + P - 1) / P);
  std::vector<int> order(pages);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<int> table(B * max_pages, 0);
  {
    int n = 0;
    for (int b = 0; b < B; ++b)
      for (int p = 0; p * P < lens[b]; ++p) table[b * max_pages + p] = order[n++];
  }
  const int copies = small ? 1 : 2;
  std::vector<std::vector<std::int8_t>> K(copies), V(copies);
  std::vector<std::vector<float>> KS(copies), VS(copies);
  std::uniform_real_distribution<float> sd(0.5f / 127, 1.5f / 127);
  for (int c = 0; c < copies; ++c) {
    K[c].resize(std::size_t(pages) * P * ROW);
    V[c].resize(std::size_t(pages) * P * ROW);
    for (auto& x : K[c]) x = std::int8_t(int(rng() % 255) - 127);
    for (auto& x : V[c]) x = std::int8_t(int(rng() % 255) - 127);
    KS[c].resize(std::size_t(pages) * P * KVH);
    VS[c].resize(std::size_t(pages) * P * KVH);
    for (auto& x : KS[c]) x = sd(rng);
    for (auto& x : VS[c]) x = sd(rng);
  }
  std::vector<float> q(B * H * D), out(B * H * D);
  std::uniform_real_distribution<float> ud(-1, 1);
  for (auto& x : q) x = ud(rng);
  call cl;
  cl.B = B;
  cl.max_pages = max_pages;
  cl.table = table.data();
  cl.len = lens.data();
  cl.q = q.data();
  cl.out = out.data();
  cl.scale = 1.0f / std::sqrt(float(D));
  for (int b = 0; b < B; ++b) {
    cl.first_task.push_back(int(cl.task_b.size()));
    for (int s = 0; s < lens[b]; s += SPLIT) cl.task_b.push_back(b), cl.task_start.push_back(s);
  }
  cl.first_task.push_back(int(cl.task_b.size()));
  std::vector<float> po(cl.task_b.size() * H * D), pml(cl.task_b.size() * H * 2);
  cl.part_o = po.data();
  cl.part_ml = pml.data();
  std::vector<std::int8_t> qtb(std::size_t(B) * KVH * 2 * 1024); std::vector<float> qsb(B * H);
  cl.qtiles = qtb.data(); cl.qscales = qsb.data();
  double bytes = 0;
  for (int l : lens) bytes += double(l) * KVH * (2 * D + 8);
  auto run = [&](int c) {
    cl.k = K[c].data();
    cl.v = V[c].data();
    cl.ks = KS[c].data();
    cl.vs = VS[c].data();
    cl.next = 0;
    for (int b = 0; b < B; ++b) prepare_q(cl, b);
    std::vector<std::thread> ts;
    for (int t = 1; t < threads; ++t) ts.emplace_back(worker, std::ref(cl));
    worker(cl);
    for (auto& t : ts) t.join();
    for (int b = 0; b < B; ++b) merge(cl, b);
  };
  // check against float64 on copy 0
  run(0);
  double worst = 0;
  for (int b = 0; b < B; b += 5) {
    for (int r = 0; r < H; r += 3) {
      const int h = r / G;
      std::vector<double> s(lens[b]);
      double mx = -1e300;
      for (int t = 0; t < lens[b]; ++t) {
        const std::int64_t pg = table[b * max_pages + t / P], row = pg * P + t % P;
        double dot = 0;
        for (int d = 0; d < D; ++d) dot += double(q[(b * H + r) * D + d]) * K[0][row * ROW + h * D + d];
        s[t] = dot * KS[0][row * KVH + h] * cl.scale;
        mx = std::max(mx, s[t]);
      }
      double l = 0;
      std::vector<double> o(D, 0);
      for (int t = 0; t < lens[b]; ++t) {
        const std::int64_t pg = table[b * max_pages + t / P], row = pg * P + t % P;
        const double p = std::exp(s[t] - mx);
        l += p;
        for (int d = 0; d < D; ++d) o[d] += p * VS[0][row * KVH + h] * V[0][row * ROW + h * D + d];
      }
      for (int d = 0; d < D; ++d) worst = std::max(worst, std::fabs(o[d] / l - out[(b * H + r) * D + d]));
    }
  }
  std::printf("max abs error %.3g\n", worst);
  std::vector<double> times;
  const int iters = small ? 4000 : 40;
  for (int it = 0; it < iters; ++it) {
    auto t0 = std::chrono::steady_clock::now();
    run(it % copies);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  double pairs = 0; for (int l : lens) pairs += double(l) * KVH;
  std::printf("per token-kvhead ticks (main thread, all calls): qk %.1f scores %.1f softmax %.1f relayout %.1f pvdot %.1f\n", ph_main[0] / pairs / (iters + 1) * threads, ph_main[1] / pairs / (iters + 1) * threads, ph_main[2] / pairs / (iters + 1) * threads, ph_main[3] / pairs / (iters + 1) * threads, ph_main[4] / pairs / (iters + 1) * threads);
  std::printf("threads %d median %.2f ms min %.2f ms  %.1f GB/s (median)\n", threads, times[iters / 2] * 1e3, times[0] * 1e3,
              bytes / times[iters / 2] / 1e9);
}
