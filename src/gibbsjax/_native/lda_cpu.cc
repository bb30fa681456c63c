// gibbsjax's native CPU kernels for LDA, called from the jitted sweep as XLA FFI custom calls.
//
// Pure functions of their inputs (no state kept between calls):
//
//   gibbsjax_lda_z_pc       the partially collapsed z-update (Magnusson et al., JCGS 2018): given phi,
//                           documents are independent, and each document's tokens are visited in order,
//                           every token drawn from p(z_i = k | z_-i, phi, w) ∝ phi_{k,w_i} (n_dk,-i + alpha_k);
//                           with frozen counts instead of phi, the approximate warm-up sweep (warmup="fast");
//   gibbsjax_log_dirichlet  log Dirichlet(counts + concentration) rows (phi given z; theta given z);
//   gibbsjax_log_dm_sum     sum over rows of sum_j [log Gamma(n_j + c_j) - log Gamma(c_j)] - [log Gamma(N + C)
//                           - log Gamma(C)] (N, C: the row's sums; the collapsed log joint), rows in order;
//   gibbsjax_lda_counts     the count tables n_dk and n_kw of the topic assignments;
//   gibbsjax_threefry2x32   jax.random's Threefry-2x32 hash, element by element (its CPU lowering).
//
// Random numbers are counter-based, so the draws depend only on the keys and on the data, never on the
// number of threads nor on which thread visits what:
//   - a token's uniform is the first word of Threefry-2x32 (20 rounds; Salmon et al., SC 2011) of the
//     counter (document id, position in the document) under the sweep's 64-bit key: the same uniform as
//     gibbsjax.models.lda.layout.token_uniforms, so this z-update and the XLA ones draw from the same
//     numbers (they can differ only where float32 sums round differently);
//   - the Dirichlet draw's variates use SplitMix64 (Steele, Lea & Flood, OOPSLA 2014) at counter
//     (proposal round, entry) under a 64-bit key from the call's key.
// Integer counts are int32, updated in a fixed order per document; float sums run in a fixed order.
//
// The batch axes that jax.vmap adds (vmap_method="expand_dims") lead every buffer: an input whose leading
// sizes multiply to 1 is shared by every batch element, one with the output's leading sizes is per element.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

// ------------------------------------------------------------------------------------------ threads
std::atomic<int> g_num_threads{1};
// Work (in elementary steps, about a nanosecond each) below which a loop runs on fewer threads: waking a
// thread costs some microseconds, more than small loops take.
constexpr int64_t kWorkPerThread = 100000;

// A persistent pool of worker threads, made on first use (again in a forked child) and never destroyed:
// one job at a time; the calling thread works on its job too. Jobs from several XLA threads (several CPU
// devices) take turns.
class Pool {
 public:
  static Pool& get() {
    static Pool* pool = nullptr;
    static std::mutex made;
    std::lock_guard<std::mutex> lock(made);
    if (pool == nullptr || pool->pid_ != getpid()) pool = new Pool();  // a forked child has no workers
    return *pool;
  }

  // Run work() on `helpers` workers and on the caller; return when every call has returned.
  void run(int helpers, const std::function<void()>& work) {
    std::lock_guard<std::mutex> one_job(job_);
    {
      std::unique_lock<std::mutex> lock(m_);
      while (static_cast<int>(workers_.size()) < helpers) {
        const int index = static_cast<int>(workers_.size());
        workers_.emplace_back([this, index] { loop(index); });
        workers_.back().detach();
      }
      work_ = &work;
      wanted_ = helpers;
      busy_ = helpers;
      ++generation_;
    }
    wake_.notify_all();
    work();
    std::unique_lock<std::mutex> lock(m_);
    done_.wait(lock, [this] { return busy_ == 0; });
    work_ = nullptr;
  }

 private:
  Pool() : pid_(getpid()) {}

  void loop(int index) {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void()>* work;
      {
        std::unique_lock<std::mutex> lock(m_);
        wake_.wait(lock, [&] { return generation_ != seen && index < wanted_; });
        seen = generation_;
        work = work_;
      }
      (*work)();
      std::lock_guard<std::mutex> lock(m_);
      if (--busy_ == 0) done_.notify_one();
    }
  }

  pid_t pid_;
  std::mutex job_, m_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  const std::function<void()>* work_ = nullptr;
  uint64_t generation_ = 0;
  int wanted_ = 0, busy_ = 0;
};

// Run fn(i) for i in [0, n) on up to g_num_threads threads (the caller's included), fewer where `work` (the
// loop's elementary steps) is small; items are taken in chunks from a shared counter. What fn computes must
// not depend on which thread runs it.
template <typename F>
void parallel_for(int64_t n, int64_t chunk, int64_t work, F&& fn) {
  if (n <= 0) return;
  chunk = std::max<int64_t>(1, chunk);
  const int64_t chunks = (n + chunk - 1) / chunk;
  const int64_t by_work = std::max<int64_t>(1, work / kWorkPerThread);
  const int threads = static_cast<int>(std::min<int64_t>({std::max(1, g_num_threads.load()), chunks, by_work}));
  std::atomic<int64_t> next{0};
  const std::function<void()> loop = [&]() {
    for (;;) {
      const int64_t c = next.fetch_add(1);
      if (c >= chunks) return;
      const int64_t hi = std::min(n, (c + 1) * chunk);
      for (int64_t i = c * chunk; i < hi; ++i) fn(i);
    }
  };
  if (threads == 1) {
    loop();
    return;
  }
  Pool::get().run(threads - 1, loop);
}

// ------------------------------------------------------------------------------------------ random numbers
inline uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

// Threefry-2x32, 20 rounds: the function behind jax.random (and gibbsjax.random.threefry2x32).
inline void threefry2x32(uint32_t k0, uint32_t k1, uint32_t& x0, uint32_t& x1) {
  static constexpr int kRot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  const uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
  x0 += ks[0];
  x1 += ks[1];
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 4; ++j) {
      x0 += x1;
      x1 = rotl32(x1, kRot[i % 2][j]) ^ x0;
    }
    x0 += ks[(i + 1) % 3];
    x1 += ks[(i + 2) % 3] + static_cast<uint32_t>(i + 1);
  }
}

// uint32 bits -> float in [0, 1): the top 23 bits as the mantissa of a number in [1, 2), minus 1
// (the construction of jax.random.uniform and of gibbsjax.models.lda.layout.token_uniforms).
inline float unit_float(uint32_t bits) {
  const uint32_t b = (bits >> 9) | 0x3F800000u;
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f - 1.0f;
}

inline uint64_t mix64(uint64_t z) {  // SplitMix64's output function
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

// Two uniforms in the open interval (0, 1) from one 64-bit word (24 bits each, centred in their cells).
inline float open_unit_hi(uint64_t w) { return (static_cast<float>(w >> 40) + 0.5f) * 5.9604645e-8f; }
inline float open_unit_lo(uint64_t w) {
  return (static_cast<float>((w >> 8) & 0xFFFFFFu) + 0.5f) * 5.9604645e-8f;
}

// ------------------------------------------------------------------------------------------ float helpers
inline float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}
inline uint32_t float_to_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// Natural log of a positive, finite, normal float, branch-free (so loops of it vectorise): x = m 2^e with
// m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.1716, by its series to s^11.
// (A division-free minimax polynomial in m - 1 measured no faster here: the division runs in the vector unit.)
inline float fast_log(float x) {
  const int32_t ix = static_cast<int32_t>(float_to_bits(x)) - 0x3F3504F3;
  const int32_t e = ix >> 23;
  const float m = bits_to_float(static_cast<uint32_t>((ix & 0x007FFFFF) + 0x3F3504F3));
  const float s = (m - 1.0f) / (m + 1.0f);
  const float s2 = s * s;
  const float p = 2.0f + s2 * (0.6666667f + s2 * (0.4f + s2 * (0.28571430f + s2 * (0.22222222f + s2 * 0.18181819f))));
  return static_cast<float>(e) * 0.69314718f + s * p;
}

// e^x for x <= 0 (0 below -87), branch-free: x = n ln2 + r, |r| <= ln2 / 2, e^r by its Taylor series to r^7.
inline float fast_exp_nonpos(float x) {
  const float xc = std::max(x, -87.0f);
  const float n = std::nearbyint(xc * 1.44269504f);
  const float r = (xc - n * 0.693145752f) - n * 1.42860677e-6f;
  const float p =
      1.0f + r * (1.0f + r * (0.5f + r * (0.16666667f + r * (0.041666668f + r * (0.008333334f + r * (0.0013888889f + r * 0.00019841270f))))));
  const float scale = bits_to_float(static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23);
  return x < -87.0f ? 0.0f : p * scale;
}

// ------------------------------------------------------------------------------------------ batches
// The leading (batch) axes of a buffer of `base_rank` trailing axes: their product, or -1 for a rank too small.
int64_t leading_size(ffi::AnyBuffer::Dimensions dims, int base_rank) {
  const int64_t lead = static_cast<int64_t>(dims.size()) - base_rank;
  if (lead < 0) return -1;
  int64_t n = 1;
  for (int64_t i = 0; i < lead; ++i) n *= dims[i];
  return n;
}
int64_t trailing(ffi::AnyBuffer::Dimensions dims, int from_end) { return dims[dims.size() - from_end]; }

// Offset of batch element b in a buffer with `lead` leading elements (1: shared) of `size` elements each.
inline int64_t batch_offset(int64_t lead, int64_t b, int64_t size) { return lead == 1 ? 0 : b * size; }

// ------------------------------------------------------------------------------------------ draws
// The hot loops are compiled for three instruction sets and picked at load time (GCC's target_clones);
// with -ffp-contract=off every clone rounds exactly alike, so the draws do not depend on the CPU's vector unit.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GJ_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define GJ_CLONES
#endif

// ------------------------------------------------------------------------------------------ the z-update
// Topics per block of the word table of the sparse draw (block sums first, then one block).
constexpr int kBlock = 32;
// log phi is floored this many nats below each word's largest topic, as in the XLA z-updates
// (gibbsjax.models.lda.conditionals.LOG_PHI_FLOOR): every weight stays positive in float32.
constexpr float kLogPhiFloor = -80.0f;
// Words per block of the word-major transposition.
constexpr int kWords = 64;

struct WordTables {
  int64_t K = 0, Kp = 0, V = 0, blocks = 0;  // Kp: K rounded up to 4, the row stride of phi
  std::vector<float> phi;               // (V, Kp): phi_{k,w} / max_k phi_{k,w}, floored; padding 0
  std::vector<float> alpha_phi_blocks;  // (V, blocks): sum over each block of alpha_k phi~_{k,w}
  std::vector<float> alpha_phi_total;   // (V,): their sum, in block order
  // The frozen-count warm-up only: phi_{k,w} = (n_kw + eta) / (n_k + V eta) from the counts at the sweep's start
  const int32_t* nkw = nullptr;         // (K, V)
  std::vector<float> inv_nk;            // (K,): 1 / (n_k + V eta)
  std::vector<float> scale;             // (V,): max_k phi_{k,w}, the divisor of the table's row w
  float eta = 0.0f;
};

// Frozen-count mode: a token's own old topic k taken out of n_kw and n_k, in the table's scale of word w.
inline float own_removed(const WordTables& t, int32_t k, int32_t w) {
  const float n_kw = static_cast<float>(t.nkw[static_cast<int64_t>(k) * t.V + w]) - 1.0f;
  const float n_k = 1.0f / t.inv_nk[k] - 1.0f;
  return (n_kw + t.eta) / n_k / t.scale[w];
}

// kWords words (w0 ...): phi~ word-major, and the word table's block sums.
GJ_CLONES void word_block(const float* log_phi, const float* alpha, int64_t K, int64_t V, int64_t w0, bool sparse,
                          float* tmp, WordTables& t) {
  const int64_t nw = std::min<int64_t>(kWords, V - w0);
  float mx[kWords];
  for (int j = 0; j < kWords; ++j) mx[j] = -INFINITY;
  if (t.nkw != nullptr) {  // frozen counts: (n_kw + eta) / (n_k + V eta), scaled to a largest entry of 1
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < nw; ++j) {
        const float v = (static_cast<float>(t.nkw[k * V + w0 + j]) + t.eta) * t.inv_nk[k];
        tmp[k * kWords + j] = v;
        mx[j] = std::max(mx[j], v);
      }
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < nw; ++j) tmp[k * kWords + j] /= mx[j];
    for (int64_t j = 0; j < nw; ++j) t.scale[w0 + j] = mx[j];
  } else if (nw == kWords) {  // rows read in order, each a contiguous run of kWords words
    for (int64_t k = 0; k < K; ++k) {
      const float* row = log_phi + k * V + w0;
      float* out = tmp + k * kWords;
      for (int j = 0; j < kWords; ++j) {
        out[j] = row[j];
        mx[j] = std::max(mx[j], row[j]);
      }
    }
    for (int64_t k = 0; k < K; ++k) {
      float* out = tmp + k * kWords;
      for (int j = 0; j < kWords; ++j) out[j] = fast_exp_nonpos(std::max(out[j] - mx[j], kLogPhiFloor));
    }
  } else {
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < nw; ++j) mx[j] = std::max(mx[j], log_phi[k * V + w0 + j]);
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < nw; ++j)
        tmp[k * kWords + j] = fast_exp_nonpos(std::max(log_phi[k * V + w0 + j] - mx[j], kLogPhiFloor));
  }
  for (int64_t j = 0; j < nw; ++j) {
    float* p = &t.phi[(w0 + j) * t.Kp];
    for (int64_t k = 0; k < K; ++k) p[k] = tmp[k * kWords + j];
    for (int64_t k = K; k < t.Kp; ++k) p[k] = 0.0f;
  }
  if (sparse) {
    for (int64_t k = 0; nw < kWords && k < K; ++k)  // the last, partial block: unused columns 0
      for (int64_t j = nw; j < kWords; ++j) tmp[k * kWords + j] = 0.0f;
    // every word's block sums of alpha_k phi~_{k,w}, topics in order within a block and blocks in order (as
    // one word at a time would add them), the kWords words side by side: independent sums, vectorised
    float total[kWords], sum[kWords];
    for (int j = 0; j < kWords; ++j) total[j] = 0.0f;
    for (int64_t b = 0; b < t.blocks; ++b) {
      for (int j = 0; j < kWords; ++j) sum[j] = 0.0f;
      const int64_t hi = std::min(K, (b + 1) * kBlock);
      for (int64_t k = b * kBlock; k < hi; ++k) {
        const float a = alpha[k];
        const float* row = tmp + k * kWords;
        for (int j = 0; j < kWords; ++j) sum[j] += a * row[j];
      }
      for (int64_t j = 0; j < nw; ++j) t.alpha_phi_blocks[(w0 + j) * t.blocks + b] = sum[j];
      for (int j = 0; j < kWords; ++j) total[j] += sum[j];
    }
    for (int64_t j = 0; j < nw; ++j) t.alpha_phi_total[w0 + j] = total[j];
  }
}

// Fill the word-major tables of one batch element from log phi (K, V), word blocks in parallel.
void build_word_tables(const float* log_phi, const float* alpha, int64_t K, int64_t V, bool sparse, WordTables& t,
                       const int32_t* nkw, float eta, bool serial) {
  t.K = K;
  t.Kp = (K + 3) & ~int64_t{3};
  t.V = V;
  t.nkw = nkw;
  t.eta = eta;
  if (nkw != nullptr) {
    t.inv_nk.resize(static_cast<size_t>(K));
    t.scale.resize(static_cast<size_t>(V));
    for (int64_t k = 0; k < K; ++k) {
      int64_t n = 0;
      for (int64_t w = 0; w < V; ++w) n += nkw[k * V + w];
      t.inv_nk[k] = 1.0f / (static_cast<float>(n) + static_cast<float>(V) * eta);
    }
  }
  t.blocks = (K + kBlock - 1) / kBlock;
  t.phi.resize(static_cast<size_t>(t.Kp * V));
  if (sparse) {
    t.alpha_phi_blocks.resize(static_cast<size_t>(V * t.blocks));
    t.alpha_phi_total.resize(static_cast<size_t>(V));
  }
  const int64_t word_blocks = (V + kWords - 1) / kWords;
  auto block = [&](int64_t wb) {
    thread_local std::vector<float> tmp;
    tmp.resize(static_cast<size_t>(K * kWords));
    word_block(log_phi, alpha, K, V, wb * kWords, sparse, tmp.data(), t);
  };
  if (serial) {
    for (int64_t wb = 0; wb < word_blocks; ++wb) block(wb);
  } else {
    parallel_for(word_blocks, std::max<int64_t>(1, word_blocks / 64), 8 * K * V, block);  // an exp per entry
  }
}

struct Grid {
  const int32_t* words;        // (S, R)
  const int32_t* docs;         // (S, R); padding: D
  const int32_t* doc_lengths;  // (D,)
  const int32_t* doc_ids;      // (D + 1,)
  int64_t S, R, D;
};

struct LaneScratch {
  std::vector<int32_t> present, where;
  std::vector<float> counts, cum, uniforms;  // counts: the document's topic counts (exact integers in float)
};

// The uniforms of a document's tokens: Threefry-2x32 of (document id, position) (independent lanes: vectorised).
GJ_CLONES void document_uniforms(uint32_t k0, uint32_t k1, uint32_t doc_id, int64_t len, float* u) {
  for (int64_t j = 0; j < len; ++j) {
    uint32_t x0 = doc_id, x1 = static_cast<uint32_t>(j);
    threefry2x32(k0, k1, x0, x1);
    u[j] = unit_float(x0);
  }
}

inline void add_present(LaneScratch& m, int32_t k) {
  m.where[k] = static_cast<int32_t>(m.present.size());
  m.present.push_back(k);
}
inline void drop_present(LaneScratch& m, int32_t k) {  // swap with the last
  const int32_t at = m.where[k], last = m.present.back();
  m.present[at] = last;
  m.where[last] = at;
  m.present.pop_back();
  m.where[k] = -1;
}

// The dense draw: weights w_k = p_k (n_k - own_k + alpha_k) (p_old in place of p_k at k = old), their prefix
// sums as prefix_sums adds them, and the inverse CDF at u * total, all in registers four topics at a time
// (no store of a weight is read back by a wider load). p, n and alpha hold Kp = K rounded up to 4 entries,
// the padding zero. Returns min(#{k : cum_k <= u total}, K - 1).
inline int32_t dense_draw(const float* p, const float* n, const float* alpha, int64_t K, int64_t Kp, int32_t old,
                          float own, float p_old, float u, float* cum) {
#if defined(__SSE2__)
  __m128 carry = _mm_setzero_ps();
  const __m128i old_v = _mm_set1_epi32(old);
  const __m128 own_v = _mm_set1_ps(own), p_old_v = _mm_set1_ps(p_old);
  __m128i idx = _mm_setr_epi32(0, 1, 2, 3);
  const __m128i four = _mm_set1_epi32(4);
  for (int64_t g = 0; g < Kp; g += 4) {
    const __m128 at_old = _mm_castsi128_ps(_mm_cmpeq_epi32(idx, old_v));
    const __m128 pv = _mm_or_ps(_mm_andnot_ps(at_old, _mm_loadu_ps(p + g)), _mm_and_ps(at_old, p_old_v));
    const __m128 nv = _mm_sub_ps(_mm_loadu_ps(n + g), _mm_and_ps(at_old, own_v));
    __m128 x = _mm_mul_ps(pv, _mm_add_ps(nv, _mm_loadu_ps(alpha + g)));
    x = _mm_add_ps(x, _mm_castsi128_ps(_mm_slli_si128(_mm_castps_si128(x), 4)));
    x = _mm_add_ps(x, _mm_castsi128_ps(_mm_slli_si128(_mm_castps_si128(x), 8)));
    x = _mm_add_ps(x, carry);
    _mm_storeu_ps(cum + g, x);
    carry = _mm_shuffle_ps(x, x, _MM_SHUFFLE(3, 3, 3, 3));
    idx = _mm_add_epi32(idx, four);
  }
  const __m128 target = _mm_set1_ps(u * _mm_cvtss_f32(carry));
  int32_t k = 0;
  for (int64_t g = 0; g < Kp; g += 4) k += __builtin_popcount(_mm_movemask_ps(_mm_cmple_ps(_mm_loadu_ps(cum + g), target)));
#else
  float wts[4];
  float carry = 0.0f;
  for (int64_t g = 0; g < Kp; g += 4) {
    for (int i = 0; i < 4; ++i) {
      const int64_t kk = g + i;
      wts[i] = (kk == old ? p_old : p[kk]) * ((n[kk] - (kk == old ? own : 0.0f)) + alpha[kk]);
    }
    const float y0 = wts[0], y1 = wts[1] + wts[0], y2 = wts[2] + wts[1], y3 = wts[3] + wts[2];
    cum[g] = y0 + carry;
    cum[g + 1] = y1 + carry;
    cum[g + 2] = (y2 + y0) + carry;
    cum[g + 3] = (y3 + y1) + carry;
    carry = cum[g + 3];
  }
  const float target = u * carry;
  int32_t k = 0;
  for (int64_t g = 0; g < Kp; ++g) k += cum[g] <= target;
#endif
  return k < K ? k : static_cast<int32_t>(K - 1);
}

// The document part of the sparse draw: weights p_k n_k over the document's present topics (p_old at k = old),
// gathered four at a time, with their prefix sums as dense_draw makes them; returns the total. cum holds np
// rounded up to 4 entries.
inline float present_sums(const float* p, const float* n, const int32_t* present, int64_t np, int32_t old,
                          float p_old, float* cum) {
  const int64_t np4 = (np + 3) & ~int64_t{3};
  float carry_s = 0.0f;
#if defined(__SSE2__)
  __m128 carry = _mm_setzero_ps();
  for (int64_t g = 0; g < np4; g += 4) {
    float w[4];
    for (int i = 0; i < 4; ++i) {
      const int64_t at = g + i;
      const int32_t k = at < np ? present[at] : -1;
      w[i] = k < 0 ? 0.0f : (k == old ? p_old : p[k]) * n[k];
    }
    __m128 x = _mm_setr_ps(w[0], w[1], w[2], w[3]);
    x = _mm_add_ps(x, _mm_castsi128_ps(_mm_slli_si128(_mm_castps_si128(x), 4)));
    x = _mm_add_ps(x, _mm_castsi128_ps(_mm_slli_si128(_mm_castps_si128(x), 8)));
    x = _mm_add_ps(x, carry);
    _mm_storeu_ps(cum + g, x);
    carry = _mm_shuffle_ps(x, x, _MM_SHUFFLE(3, 3, 3, 3));
  }
  carry_s = _mm_cvtss_f32(carry);
#else
  for (int64_t g = 0; g < np4; g += 4) {
    float w[4];
    for (int i = 0; i < 4; ++i) {
      const int64_t at = g + i;
      const int32_t k = at < np ? present[at] : -1;
      w[i] = k < 0 ? 0.0f : (k == old ? p_old : p[k]) * n[k];
    }
    const float y0 = w[0], y1 = w[1] + w[0], y2 = w[2] + w[1], y3 = w[3] + w[2];
    cum[g] = y0 + carry_s;
    cum[g + 1] = y1 + carry_s;
    cum[g + 2] = (y2 + y0) + carry_s;
    cum[g + 3] = (y3 + y1) + carry_s;
    carry_s = cum[g + 3];
  }
#endif
  return carry_s;
}

// The number of the first np prefix sums at or below target, clamped to np - 1 (four at a time).
inline int64_t count_present(const float* cum, int64_t np, float target) {
  const int64_t np4 = (np + 3) & ~int64_t{3};
  int64_t k = 0;
#if defined(__SSE2__)
  const __m128 t = _mm_set1_ps(target);
  for (int64_t g = 0; g < np4; g += 4) k += __builtin_popcount(_mm_movemask_ps(_mm_cmple_ps(_mm_loadu_ps(cum + g), t)));
#else
  for (int64_t g = 0; g < np4; ++g) k += cum[g] <= target;
#endif
  return k < np ? k : np - 1;
}

// One lane of one batch element: its documents in order, each token from its conditional.
// `keep_own` (the planted wrong variant, for tests only) leaves the token's own topic in its count.
GJ_CLONES void update_lane(const Grid& g, int64_t r, const int32_t* z_in, int32_t* z_out, const WordTables& t,
                           const float* alpha_p, uint32_t k0, uint32_t k1, bool sparse, bool keep_own, LaneScratch& m) {
  const int64_t K = t.K, Kp = t.Kp;
  const bool frozen = t.nkw != nullptr;
  if (m.counts.size() != static_cast<size_t>(Kp) || m.where.size() != static_cast<size_t>(K)) {
    m.counts.assign(static_cast<size_t>(Kp), 0.0f);  // a new K; otherwise left all 0 (-1) by the last document
    m.where.assign(static_cast<size_t>(K), -1);
  }
  m.present.clear();
  m.cum.resize(static_cast<size_t>(Kp + 4));
  float* counts = m.counts.data();
  float* cum = m.cum.data();
  const float own = keep_own ? 0.0f : 1.0f;
  int64_t s = 0;
  while (s < g.S) {
    const int64_t slot0 = s * g.R + r;
    const int32_t doc = g.docs[slot0];
    if (doc >= g.D) break;  // the lane's documents start at step 0 and follow one another: the rest is padding
    const int64_t len = g.doc_lengths[doc];
    m.uniforms.resize(static_cast<size_t>(len));
    document_uniforms(k0, k1, static_cast<uint32_t>(g.doc_ids[doc]), len, m.uniforms.data());
    for (int64_t j = 0; j < len; ++j) {  // the document's counts from its old topics
      const int32_t k = z_in[(s + j) * g.R + r];
      if (counts[k]++ == 0.0f && sparse) add_present(m, k);
    }
    // The sparse form pays per topic present; a document holding a third of the topics or more (early
    // sweeps from random topics) is drawn in the dense form. Either draws the exact conditional, and the
    // choice depends on the document's state only.
    const bool dense = !sparse || 3 * static_cast<int64_t>(m.present.size()) >= K;
    for (int64_t j = 0; j < len; ++j) {
      const int64_t slot = (s + j) * g.R + r;
      const int32_t w = g.words[slot];
      const int32_t old = z_in[slot];
      const float u = m.uniforms[j];
      const float* p = &t.phi[static_cast<int64_t>(w) * Kp];
      // frozen counts: the own old topic's entry of word w with the token taken out of n_kw and n_k
      const float p_old = frozen ? own_removed(t, old, w) : p[old];
      int32_t knew;
      if (dense) {
        knew = dense_draw(p, counts, alpha_p, K, Kp, old, own, p_old, u, cum);  // own taken out in the draw
        if (--counts[old] == 0.0f && sparse) drop_present(m, old);
      } else {
        // p(k) ∝ phi~_{k,w} n_dk + alpha_k phi~_{k,w}: the document's topics, then the word's table
        if (!keep_own && --counts[old] == 0.0f) drop_present(m, old);
        const int64_t np = static_cast<int64_t>(m.present.size());
        const float doc_total = present_sums(p, counts, m.present.data(), np, old, p_old, cum);
        // (frozen counts: the own topic's change to the word table's total and to its block's sum)
        const float delta = frozen ? alpha_p[old] * (p_old - p[old]) : 0.0f;
        const float target = u * (doc_total + (t.alpha_phi_total[w] + delta));
        if (target < doc_total) {
          knew = m.present[count_present(cum, np, target)];
        } else {
          float rest = target - doc_total;
          const float* bsum = &t.alpha_phi_blocks[static_cast<int64_t>(w) * t.blocks];
          const int64_t b_old = old / kBlock;
          int64_t b = 0;
          while (b < t.blocks - 1) {
            const float sum = b == b_old ? bsum[b] + delta : bsum[b];
            if (sum > rest) break;
            rest -= sum;
            ++b;
          }
          const int64_t hi = std::min(K, (b + 1) * kBlock);
          int64_t k = b * kBlock;
          float acc = 0.0f;
          for (; k < hi - 1; ++k) {
            acc += alpha_p[k] * (k == old ? p_old : p[k]);
            if (acc > rest) break;
          }
          knew = static_cast<int32_t>(k);
        }
        if (keep_own && --counts[old] == 0.0f) drop_present(m, old);
      }
      if (counts[knew]++ == 0.0f && sparse) add_present(m, knew);
      z_out[slot] = knew;
    }
    if (sparse) {  // clear the document's counts for the next one
      for (int32_t k : m.present) {
        counts[k] = 0.0f;
        m.where[k] = -1;
      }
      m.present.clear();
    } else {
      std::fill(m.counts.begin(), m.counts.end(), 0.0f);
    }
    s += len;
  }
}

ffi::Error ZUpdateImpl(ffi::Buffer<ffi::U32> key, ffi::Buffer<ffi::S32> z, ffi::Buffer<ffi::F32> log_phi,
                       ffi::Buffer<ffi::F32> alpha, ffi::Buffer<ffi::S32> words, ffi::Buffer<ffi::S32> docs,
                       ffi::Buffer<ffi::S32> doc_lengths, ffi::Buffer<ffi::S32> doc_ids, ffi::Buffer<ffi::S32> nkw,
                       ffi::Buffer<ffi::F32> eta, ffi::ResultBuffer<ffi::S32> z_out, int64_t sparse_from,
                       int64_t keep_own, int64_t frozen_counts) {
  const auto zd = z.dimensions();
  if (zd.size() < 2) return ffi::Error::InvalidArgument("gibbsjax_lda_z_pc: z must be (..., S, R)");
  const int64_t S = trailing(zd, 2), R = trailing(zd, 1);
  const int64_t batch = leading_size(z_out->dimensions(), 2);
  const int64_t z_lead = leading_size(zd, 2);
  const auto pd = log_phi.dimensions();
  if (pd.size() < 2) return ffi::Error::InvalidArgument("gibbsjax_lda_z_pc: log_phi must be (..., K, V)");
  const int64_t K = trailing(pd, 2), V = trailing(pd, 1);
  const int64_t D = trailing(doc_lengths.dimensions(), 1);
  struct In {
    int64_t lead, size;
  };
  const In ins[] = {{leading_size(key.dimensions(), 1), 2},
                    {z_lead, S * R},
                    {leading_size(pd, 2), K * V},
                    {leading_size(alpha.dimensions(), 1), K},
                    {leading_size(words.dimensions(), 2), S * R},
                    {leading_size(docs.dimensions(), 2), S * R},
                    {leading_size(doc_lengths.dimensions(), 1), D},
                    {leading_size(doc_ids.dimensions(), 1), D + 1}};
  for (const In& in : ins) {
    if (in.lead != 1 && in.lead != batch)
      return ffi::Error::InvalidArgument("gibbsjax_lda_z_pc: an input is batched over other axes than z");
  }
  if (trailing(key.dimensions(), 1) != 2 || trailing(alpha.dimensions(), 1) != K)
    return ffi::Error::InvalidArgument("gibbsjax_lda_z_pc: key must be (..., 2) and alpha (..., K)");
  // the frozen-count warm-up: word-topic counts (..., K, V) and eta (..., 1) instead of log phi
  const bool frozen = frozen_counts != 0;
  const int64_t nkw_lead = frozen ? leading_size(nkw.dimensions(), 2) : 1;
  const int64_t eta_lead = frozen ? leading_size(eta.dimensions(), 1) : 1;
  if (frozen && (trailing(nkw.dimensions(), 2) != K || trailing(nkw.dimensions(), 1) != V ||
                 (nkw_lead != 1 && nkw_lead != batch) || (eta_lead != 1 && eta_lead != batch)))
    return ffi::Error::InvalidArgument("gibbsjax_lda_z_pc: frozen counts must be (..., K, V) and eta (..., 1)");
  const bool sparse = K >= sparse_from;
  const int nt = std::max(1, g_num_threads.load());
  const int64_t per_token = sparse ? 64 : K + 16;
  // One batch element (chain): its word tables, then its lanes; `serial`: all on the calling thread.
  auto one_chain = [&](int64_t b, WordTables& tables, bool serial) {
    const uint32_t* kp = key.typed_data() + batch_offset(ins[0].lead, b, 2);
    const float* a = alpha.typed_data() + batch_offset(ins[3].lead, b, K);
    build_word_tables(log_phi.typed_data() + batch_offset(ins[2].lead, b, K * V), a, K, V, sparse, tables,
                      frozen ? nkw.typed_data() + batch_offset(nkw_lead, b, K * V) : nullptr,
                      frozen ? eta.typed_data()[batch_offset(eta_lead, b, 1)] : 0.0f, serial);
    Grid g{words.typed_data() + batch_offset(ins[4].lead, b, S * R),
           docs.typed_data() + batch_offset(ins[5].lead, b, S * R),
           doc_lengths.typed_data() + batch_offset(ins[6].lead, b, D),
           doc_ids.typed_data() + batch_offset(ins[7].lead, b, D + 1),
           S, R, D};
    const int32_t* zi = z.typed_data() + batch_offset(ins[1].lead, b, S * R);
    int32_t* zo = z_out->typed_data() + b * S * R;
    std::fill(zo, zo + S * R, 0);  // padding: topic 0, as the XLA updates leave it
    std::vector<float> alpha_pad(static_cast<size_t>(tables.Kp), 0.0f);  // zero past K, as the table rows
    std::copy(a, a + K, alpha_pad.begin());
    auto lane = [&](int64_t r) {
      thread_local LaneScratch scratch;
      update_lane(g, r, zi, zo, tables, alpha_pad.data(), kp[0], kp[1], sparse, keep_own != 0, scratch);
    };
    if (serial) {
      for (int64_t r = 0; r < R; ++r) lane(r);
    } else {
      // chunks of whole cache lines of lanes (16 int32 slots of a grid row): two threads writing the topics of
      // neighbouring lanes of one row would share its cache line (false sharing)
      parallel_for(R, std::max<int64_t>(16, R / (8 * nt) / 16 * 16), S * R * per_token, lane);
    }
  };
  if (nt > 1 && batch >= nt) {  // as many chains as threads: whole chains per thread, no step in lockstep
    parallel_for(batch, 1, batch * S * R * per_token, [&](int64_t b) {
      thread_local WordTables chain_tables;
      one_chain(b, chain_tables, true);
    });
  } else {
    thread_local WordTables own_tables;  // reused by the calling thread from call to call
    for (int64_t b = 0; b < batch; ++b) one_chain(b, own_tables, false);
  }
  return ffi::Error::Success();
}

// ------------------------------------------------------------------------------------------ Dirichlet rows
// log Gamma(a) for 0 < a < 1 by G(a) = G(1 + a) U^(1/a) (Marsaglia & Tsang 2000, sec. 6) with G(1 + a) by
// rejection from an exponential envelope of rate 1/(1 + a): propose x = (1 + a) E, E ~ Exp(1), accept with
// probability exp(a (1 + log E - E)) (at least 68 % for every a < 1, 99.4 % at a = 0.01); given acceptance,
// U_acc / p is again uniform and independent of E, so it serves as the U of the boost:
//   log G(a) = log(1 + a) + log E + (log U_acc - log p) / a.
// One 64-bit word per proposal. Returns NaN where the proposal is rejected.
inline float small_shape_proposal(uint64_t w, float a, float log1p_a, float inv_a) {
  const float e = -fast_log(open_unit_hi(w));
  const float log_e = fast_log(e);
  const float log_p = a * (1.0f + log_e - e);
  const float log_u = fast_log(open_unit_lo(w));
  const float out = log1p_a + log_e + (log_u - log_p) * inv_a;
  return log_u <= log_p ? out : NAN;
}

// log Gamma(a) for a >= 1 by Marsaglia & Tsang (2000), in double: d = a - 1/3, c = 1/sqrt(9 d), z ~ N(0, 1)
// (Marsaglia's polar method), v = (1 + c z)^3, accept if v > 0 and log U < z^2/2 + d - d v + d log v;
// then log(d v).
double large_shape_log_gamma(uint64_t seed, uint64_t entry, double a) {
  const double d = a - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (uint64_t round = 1;; ++round) {
    const uint64_t w1 = mix64(seed + ((round << 40) ^ entry) * kGolden);
    const uint64_t w2 = mix64(seed + ((round << 40) ^ entry ^ (uint64_t{1} << 39)) * kGolden);
    const double v1 = static_cast<double>(static_cast<int64_t>(w1) >> 11) * 0x1.0p-52;  // in [-1, 1)
    const double v2 = static_cast<double>(static_cast<int64_t>(w2) >> 11) * 0x1.0p-52;
    const double q = v1 * v1 + v2 * v2;
    if (q >= 1.0 || q == 0.0) continue;
    const double zn = v1 * std::sqrt(-2.0 * std::log(q) / q);
    const double t = c * zn;
    if (t <= -1.0) continue;
    const double u = (static_cast<double>(mix64(w1 ^ (w2 << 1)) >> 11) + 0.5) * 0x1.0p-53;
    // z^2/2 + d - d v + d log v with v = (1 + t)^3, written without cancelling terms of size d
    const double l1p = std::log1p(t);
    const double bound = zn * zn * (1.0 / 6.0 - c * zn / 9.0) + 3.0 * d * (l1p - t);
    if (std::log(u) < bound) return std::log(d) + 3.0 * l1p;
  }
}

// Per column: the zero-count shape (conc if below 1, else a dummy 0.5 whose proposal is replaced), log1p of it
// and its inverse.
struct ColumnShapes {
  std::vector<float> a, log1p_a, inv_a;
  void set(const float* conc, int64_t C) {
    a.resize(C);
    log1p_a.resize(C);
    inv_a.resize(C);
    for (int64_t j = 0; j < C; ++j) {
      a[j] = conc[j] < 1.0f ? conc[j] : 0.5f;
      log1p_a[j] = std::log1p(a[j]);
      inv_a[j] = 1.0f / a[j];
    }
  }
};

// Step 1 of a row: every entry's first proposal as if its count were 0 (branch-free: vectorised).
GJ_CLONES void first_proposals(uint64_t seed, uint64_t first_entry, const ColumnShapes& cs, int64_t C, float* out) {
  const float* a = cs.a.data();
  const float* l1p = cs.log1p_a.data();
  const float* inv = cs.inv_a.data();
  for (int64_t j = 0; j < C; ++j) {
    const uint64_t w = mix64(seed + (first_entry + static_cast<uint64_t>(j)) * kGolden);
    out[j] = small_shape_proposal(w, a[j], l1p[j], inv[j]);
  }
}

// Step 3: out -= logsumexp(out), the max and the sum in kLanes partial results combined in a fixed order.
GJ_CLONES void log_normalise(float* out, int64_t C) {
  constexpr int kLanes = 16;
  float mx[kLanes], sm[kLanes];
  for (int i = 0; i < kLanes; ++i) mx[i] = -INFINITY, sm[i] = 0.0f;
  const int64_t full = C / kLanes * kLanes;
  for (int64_t j = 0; j < full; j += kLanes)
    for (int i = 0; i < kLanes; ++i) mx[i] = std::max(mx[i], out[j + i]);
  for (int64_t j = full; j < C; ++j) mx[0] = std::max(mx[0], out[j]);
  float m = -INFINITY;
  for (int i = 0; i < kLanes; ++i) m = std::max(m, mx[i]);
  for (int64_t j = 0; j < full; j += kLanes)
    for (int i = 0; i < kLanes; ++i) sm[i] += fast_exp_nonpos(out[j + i] - m);
  for (int64_t j = full; j < C; ++j) sm[0] += fast_exp_nonpos(out[j] - m);
  float total = 0.0f;
  for (int i = 0; i < kLanes; ++i) total += sm[i];
  const float shift = m + std::log(total);
  for (int64_t j = 0; j < C; ++j) out[j] -= shift;
}

// One row: log G_j ~ log Gamma(counts_j + conc_j), then minus their logsumexp.
void dirichlet_row(uint64_t seed, uint64_t first_entry, const int32_t* counts, const float* conc,
                   const ColumnShapes& cs, int64_t C, float* out) {
  first_proposals(seed, first_entry, cs, C, out);
  // 2. the rest: shapes of at least 1 (a count, or a concentration of at least 1), and rejected proposals;
  // blocks of 16 entries with none of them are skipped after one branch-free test
  constexpr int64_t kSkip = 16;
  for (int64_t j0 = 0; j0 < C; j0 += kSkip) {
    const int64_t j1 = std::min(C, j0 + kSkip);
    int32_t any = 0;
    for (int64_t j = j0; j < j1; ++j) any |= (counts[j] > 0) | (conc[j] >= 1.0f) | (out[j] != out[j]);
    if (!any) continue;
  for (int64_t j = j0; j < j1; ++j) {
    const uint64_t entry = first_entry + static_cast<uint64_t>(j);
    if (counts[j] > 0 || conc[j] >= 1.0f) {
      out[j] = static_cast<float>(
          large_shape_log_gamma(seed, entry, static_cast<double>(counts[j]) + static_cast<double>(conc[j])));
    } else if (std::isnan(out[j])) {
      for (uint64_t round = 1; std::isnan(out[j]); ++round) {
        const uint64_t w = mix64(seed + ((round << 40) ^ entry) * kGolden);
        out[j] = small_shape_proposal(w, cs.a[j], cs.log1p_a[j], cs.inv_a[j]);
      }
    }
  }
  }
  log_normalise(out, C);
}

ffi::Error LogDirichletImpl(ffi::Buffer<ffi::U32> key, ffi::Buffer<ffi::S32> counts, ffi::Buffer<ffi::F32> conc,
                            ffi::ResultBuffer<ffi::F32> out) {
  const auto od = out->dimensions();
  if (od.size() < 2) return ffi::Error::InvalidArgument("gibbsjax_log_dirichlet: counts must be (..., rows, C)");
  const int64_t rows = trailing(od, 2), C = trailing(od, 1);
  const int64_t batch = leading_size(od, 2);
  const int64_t key_lead = leading_size(key.dimensions(), 1);
  const int64_t counts_lead = leading_size(counts.dimensions(), 2);
  const int64_t conc_lead = leading_size(conc.dimensions(), 1);
  for (int64_t lead : {key_lead, counts_lead, conc_lead}) {
    if (lead != 1 && lead != batch)
      return ffi::Error::InvalidArgument("gibbsjax_log_dirichlet: an input is batched over other axes than the output");
  }
  if (trailing(key.dimensions(), 1) != 2 || trailing(conc.dimensions(), 1) != C)
    return ffi::Error::InvalidArgument("gibbsjax_log_dirichlet: key must be (..., 2) and concentration (..., C)");
  const int64_t n = batch * rows;
  std::vector<ColumnShapes> shapes(static_cast<size_t>(conc_lead));
  for (int64_t b = 0; b < conc_lead; ++b) shapes[b].set(conc.typed_data() + b * C, C);
  parallel_for(n, std::max<int64_t>(1, n / (16 * std::max(1, g_num_threads.load()))), 8 * n * C, [&](int64_t i) {
    const int64_t b = i / rows, row = i % rows;
    const uint32_t* kp = key.typed_data() + batch_offset(key_lead, b, 2);
    const uint64_t seed = mix64((static_cast<uint64_t>(kp[0]) << 32) | kp[1]);
    const int32_t* c = counts.typed_data() + batch_offset(counts_lead, b, rows * C) + row * C;
    const float* a = conc.typed_data() + batch_offset(conc_lead, b, C);
    dirichlet_row(seed, static_cast<uint64_t>(row) * static_cast<uint64_t>(C), c, a, shapes[conc_lead == 1 ? 0 : b],
                  C, out->typed_data() + b * rows * C + row * C);
  });
  return ffi::Error::Success();
}

// ------------------------------------------------------------------------------------------ counts
// The count tables of topic assignments z on the grid: n_dk (D + 1, K) and n_kw (K, V), padding slots (document
// D) left out, as gibbsjax.models.lda.layout.topic_counts makes them with scatter-adds; chains in parallel.
ffi::Error CountsImpl(ffi::Buffer<ffi::S32> z, ffi::Buffer<ffi::S32> words, ffi::Buffer<ffi::S32> docs,
                      ffi::ResultBuffer<ffi::S32> ndk, ffi::ResultBuffer<ffi::S32> nkw) {
  const auto zd = z.dimensions();
  if (zd.size() < 2) return ffi::Error::InvalidArgument("gibbsjax_lda_counts: z must be (..., S, R)");
  const int64_t S = trailing(zd, 2), R = trailing(zd, 1), SR = S * R;
  const int64_t batch = leading_size(nkw->dimensions(), 2);
  const int64_t D1 = trailing(ndk->dimensions(), 2), K = trailing(ndk->dimensions(), 1);
  const int64_t V = trailing(nkw->dimensions(), 1);
  const int64_t z_lead = leading_size(zd, 2), w_lead = leading_size(words.dimensions(), 2),
                d_lead = leading_size(docs.dimensions(), 2);
  for (int64_t lead : {z_lead, w_lead, d_lead}) {
    if (lead != 1 && lead != batch)
      return ffi::Error::InvalidArgument("gibbsjax_lda_counts: an input is batched over other axes than the output");
  }
  // Fewer chains than threads: each chain's topics split into ranges, one task per (chain, range), each task
  // reading every token and counting those of its topics (integer counts: the same tables in any split).
  const int nt = std::max(1, g_num_threads.load());
  const int64_t parts = batch >= nt ? 1 : std::min<int64_t>(K, (nt + batch - 1) / batch);
  parallel_for(batch * parts, 1, batch * (parts * SR + K * V + D1 * K), [&](int64_t task) {
    const int64_t b = task / parts, part = task % parts;
    const int32_t k0 = static_cast<int32_t>(K * part / parts), k1 = static_cast<int32_t>(K * (part + 1) / parts);
    const int32_t* zb = z.typed_data() + batch_offset(z_lead, b, SR);
    const int32_t* wb = words.typed_data() + batch_offset(w_lead, b, SR);
    const int32_t* db = docs.typed_data() + batch_offset(d_lead, b, SR);
    int32_t* nd = ndk->typed_data() + b * D1 * K;
    int32_t* nw = nkw->typed_data() + b * K * V;
    if (parts == 1) {
      std::fill(nd, nd + D1 * K, 0);
    } else {
      for (int64_t r = 0; r < D1; ++r) std::fill(nd + r * K + k0, nd + r * K + k1, 0);
    }
    std::fill(nw + k0 * V, nw + k1 * V, 0);
    // lanes hold documents from step 0 on: the lanes past the last one with a document at step 0 are empty (a
    // bucket's padding)
    int64_t lanes = 0;
    for (int64_t r = 0; r < R; ++r)
      if (db[r] < D1 - 1) lanes = r + 1;
    for (int64_t row = 0; row < S; ++row) {
      for (int64_t i = row * R, end = row * R + lanes; i < end; ++i) {
        const int32_t doc = db[i];
        if (doc >= D1 - 1) continue;  // padding
        const int32_t k = zb[i];
        if (k < k0 || k >= k1) continue;
        ++nd[static_cast<int64_t>(doc) * K + k];
        ++nw[static_cast<int64_t>(k) * V + wb[i]];
      }
    }
  });
  return ffi::Error::Success();
}

// ------------------------------------------------------------------------------------------ log-gamma sums
// Per row: sum_j [log Gamma(n_j + c_j) - log Gamma(c_j)], the count-dependent part of a Dirichlet-multinomial
// log likelihood; zero counts add nothing, so only the nonzero ones are evaluated (in double, lgamma_r: no
// shared state).
ffi::Error LogDmSumImpl(ffi::Buffer<ffi::S32> counts, ffi::Buffer<ffi::F32> conc, ffi::ResultBuffer<ffi::F32> out) {
  const auto cd = counts.dimensions();
  if (cd.size() < 2) return ffi::Error::InvalidArgument("gibbsjax_log_dm_sum: counts must be (..., rows, C)");
  const int64_t rows = trailing(cd, 2), C = trailing(cd, 1);
  const int64_t batch = leading_size(out->dimensions(), 0);
  const int64_t counts_lead = leading_size(cd, 2), conc_lead = leading_size(conc.dimensions(), 1);
  if ((counts_lead != 1 && counts_lead != batch) || (conc_lead != 1 && conc_lead != batch) ||
      trailing(conc.dimensions(), 1) != C)
    return ffi::Error::InvalidArgument("gibbsjax_log_dm_sum: counts (..., rows, C), concentration (..., C)");
  std::vector<std::vector<double>> base(static_cast<size_t>(conc_lead));
  std::vector<double> total(static_cast<size_t>(conc_lead), 0.0), log_total(static_cast<size_t>(conc_lead));
  int sign;
  for (int64_t b = 0; b < conc_lead; ++b) {
    base[b].resize(C);
    for (int64_t j = 0; j < C; ++j) {
      base[b][j] = lgamma_r(static_cast<double>(conc.typed_data()[b * C + j]), &sign);
      total[b] += static_cast<double>(conc.typed_data()[b * C + j]);
    }
    log_total[b] = lgamma_r(total[b], &sign);
  }
  // A concentration that is the same for every column (a symmetric prior): its terms lgamma(n + c) - lgamma(c)
  // for the counts n below kTable, tabled once (the same values as evaluated one by one)
  constexpr int64_t kTable = 1024;
  std::vector<std::vector<double>> table(static_cast<size_t>(conc_lead));
  for (int64_t b = 0; b < conc_lead; ++b) {
    const float* a = conc.typed_data() + b * C;
    if (C == 0 || !std::all_of(a, a + C, [&](float x) { return x == a[0]; })) continue;
    table[b].resize(static_cast<size_t>(kTable));
    for (int64_t k = 0; k < kTable; ++k)
      table[b][k] = lgamma_r(static_cast<double>(k) + static_cast<double>(a[0]), &sign) - base[b][0];
  }
  // every row's term, in parallel; then their sum in row order (the same with any number of threads; an
  // empty row's term is exactly 0, so empty rows appended leave the sum as it was)
  const int64_t n = batch * rows;
  std::vector<double> term(static_cast<size_t>(n));
  parallel_for(n, std::max<int64_t>(1, n / (16 * std::max(1, g_num_threads.load()))), n * C, [&](int64_t i) {
    const int64_t b = i / rows, row = i % rows;
    const int64_t cb = conc_lead == 1 ? 0 : b;
    const int32_t* c = counts.typed_data() + batch_offset(counts_lead, b, rows * C) + row * C;
    const float* a = conc.typed_data() + cb * C;
    const double* lg = base[cb].data();
    const std::vector<double>& tab = table[cb];
    const int64_t tabled = static_cast<int64_t>(tab.size());
    double sum = 0.0;
    int64_t row_total = 0;
    int sgn;
    for (int64_t j = 0; j < C; ++j) {
      if (c[j] != 0) {
        sum += c[j] < tabled ? tab[c[j]] : lgamma_r(static_cast<double>(c[j]) + static_cast<double>(a[j]), &sgn) - lg[j];
        row_total += c[j];
      }
    }
    if (row_total != 0) sum -= lgamma_r(static_cast<double>(row_total) + total[cb], &sgn) - log_total[cb];
    term[i] = sum;
  });
  for (int64_t b = 0; b < batch; ++b) {
    double sum = 0.0;
    for (int64_t row = 0; row < rows; ++row) sum += term[b * rows + row];
    out->typed_data()[b] = static_cast<float>(sum);
  }
  return ffi::Error::Success();
}

// ------------------------------------------------------------------------------------------ Threefry
// jax.random's hash on a CPU (the threefry2x32 primitive: gibbsjax.models.lda.native lowers it here): the
// same 20 rounds, element by element, so the bits are those of jax's own lowering; an input of one element
// is shared by all. A loop the compiler vectorises, and no XLA loop to compile at every call site.
GJ_CLONES void threefry_block(const uint32_t* k0, const uint32_t* k1, const uint32_t* x0, const uint32_t* x1,
                              int64_t s0, int64_t s1, int64_t s2, int64_t s3, int64_t lo, int64_t hi,
                              uint32_t* o0, uint32_t* o1) {
  for (int64_t i = lo; i < hi; ++i) {
    uint32_t a = x0[i * s2], b = x1[i * s3];
    threefry2x32(k0[i * s0], k1[i * s1], a, b);
    o0[i] = a;
    o1[i] = b;
  }
}

ffi::Error ThreefryImpl(ffi::Buffer<ffi::U32> k0, ffi::Buffer<ffi::U32> k1, ffi::Buffer<ffi::U32> x0,
                        ffi::Buffer<ffi::U32> x1, ffi::ResultBuffer<ffi::U32> o0, ffi::ResultBuffer<ffi::U32> o1) {
  const int64_t n = static_cast<int64_t>(o0->element_count());
  int64_t stride[4];
  const ffi::Buffer<ffi::U32>* ins[4] = {&k0, &k1, &x0, &x1};
  for (int i = 0; i < 4; ++i) {
    const int64_t m = static_cast<int64_t>(ins[i]->element_count());
    if (m != n && m != 1) return ffi::Error::InvalidArgument("gibbsjax_threefry2x32: inputs of 1 or n elements");
    stride[i] = m == n ? 1 : 0;
  }
  const int64_t block = 1 << 14;
  const int64_t blocks = (n + block - 1) / block;
  parallel_for(blocks, 1, 30 * n, [&](int64_t j) {
    const int64_t lo = j * block, hi = std::min(n, lo + block);
    threefry_block(k0.typed_data(), k1.typed_data(), x0.typed_data(), x1.typed_data(), stride[0], stride[1],
                   stride[2], stride[3], lo, hi, o0->typed_data(), o1->typed_data());
  });
  return ffi::Error::Success();
}

// ------------------------------------------------------------------------------------------ collapsed z-update
// The collapsed z-update (Griffiths & Steyvers, PNAS 2004) in the bucket form of Yao, Mimno & McCallum (KDD 2009):
// with every count taken without token i, p(z_i = k | z_-i, w) ∝ (n_kw + eta)(n_dk + alpha_k) / (n_k + V eta)
// splits into three positive parts,
//   q_k = n_kw (n_dk + alpha_k) / (n_k + V eta)   over the topics word w holds (summed per token),
//   r_k = eta n_dk / (n_k + V eta)                over the topics the document holds (its sum kept up to date),
//   s_k = eta alpha_k / (n_k + V eta)             over every topic (its sum kept up to date),
// and the draw picks the part at u (q + r + s), then the topic inside it: the exact conditional, at a cost per
// token of the word's and the document's topics, not K. A chain is one sequence of tokens on one thread (documents
// in row order, each document's tokens in order; each token's uniform is the partially collapsed update's, keyed
// by (document id, position)), so its draws depend on neither the threads nor the packing into lanes.
// The counts are rebuilt from z at each call: n_k, and n_kw as a list of (topic, count) per word in a slice of
// capacity min(c_w, K), c_w the word's tokens, each list in the order its topics first occur in visiting order
// (so that the order of the float sums does not depend on the packing either). The sums s and r are summed afresh
// at each document (in double, in a fixed order), and updated per token in between.

struct CollapsedScratch {
  std::vector<int64_t> doc_start;
  std::vector<int32_t> nk, ndk, present, where, word_off, word_len, topic, count, by_word, word_fill, mark;
  std::vector<float> inv, coef, qcum, uniforms, nkw_dense, eta_pad;
};

// Find topic k in word w's list (its index), or -1.
inline int64_t find_topic(const int32_t* topic, int64_t n, int32_t k) {
  for (int64_t e = 0; e < n; ++e)
    if (topic[e] == k) return e;
  return -1;
}

// Each document's first slot on the grid (-1: a document without tokens), and topic 0 in every padding slot (as
// the other updates leave it). A lane holds its documents one after another from step 0, so its first padding
// slot ends it: the walk costs the lanes and documents, not the (bucket-padded) grid. The collapsed sweep visits
// documents in row order from there, so its draws do not depend on how the documents are packed into lanes.
void document_starts(const Grid& g, std::vector<int64_t>& start, int32_t* z_out) {
  start.assign(static_cast<size_t>(g.D), -1);
  std::fill(z_out, z_out + g.S * g.R, 0);
  for (int64_t r = 0; r < g.R; ++r) {
    int64_t s = 0;
    while (s < g.S) {
      const int64_t slot = s * g.R + r;
      const int32_t doc = g.docs[slot];
      if (doc >= g.D) break;
      start[doc] = slot;
      s += g.doc_lengths[doc];
    }
  }
}

// fn(slot) for every token, documents in row order.
template <typename F>
inline void for_each_token(const Grid& g, const std::vector<int64_t>& start, F&& fn) {
  for (int64_t doc = 0; doc < g.D; ++doc) {
    if (start[doc] < 0) continue;
    for (int64_t j = 0, slot = start[doc]; j < g.doc_lengths[doc]; ++j, slot += g.R) fn(slot);
  }
}

// The dense form, for few topics: n_kw word-major (V, Kp) in float (exact integers), every weight
// (n_kw + eta) coef_k with coef_k = (n_dk + alpha_k) / (n_k + V eta), prefix sums four topics at a time.
GJ_CLONES void collapsed_chain_dense(const Grid& g, int64_t V, const int32_t* z_in, int32_t* z_out, const float* alpha,
                           int64_t K, float eta, uint32_t k0, uint32_t k1, bool keep_own, CollapsedScratch& m) {
  const int64_t R = g.R, Kp = (K + 3) / 4 * 4;
  const float v_eta = static_cast<float>(V) * eta;
  m.nkw_dense.assign(static_cast<size_t>(V * Kp), 0.0f);
  m.nk.assign(static_cast<size_t>(K), 0);
  float* nkw = m.nkw_dense.data();
  document_starts(g, m.doc_start, z_out);
  for_each_token(g, m.doc_start, [&](int64_t i) {
    ++m.nk[z_in[i]];
    nkw[static_cast<int64_t>(g.words[i]) * Kp + z_in[i]] += 1.0f;
  });
  m.inv.assign(static_cast<size_t>(Kp), 0.0f);
  m.coef.assign(static_cast<size_t>(Kp), 0.0f);  // zero past K: no weight
  m.eta_pad.assign(static_cast<size_t>(Kp), 0.0f);
  m.qcum.resize(static_cast<size_t>(Kp + 4));
  m.ndk.assign(static_cast<size_t>(K), 0);
  int32_t* nk = m.nk.data();
  int32_t* ndk = m.ndk.data();
  float* inv = m.inv.data();
  float* coef = m.coef.data();
  for (int64_t k = 0; k < K; ++k) {
    inv[k] = 1.0f / (static_cast<float>(nk[k]) + v_eta);
    coef[k] = alpha[k] * inv[k];
    m.eta_pad[k] = eta;
  }
  auto change = [&](int32_t k, int32_t w, int32_t d) {
    nkw[static_cast<int64_t>(w) * Kp + k] += static_cast<float>(d);
    nk[k] += d;
    ndk[k] += d;
    inv[k] = 1.0f / (static_cast<float>(nk[k]) + v_eta);
    coef[k] = (static_cast<float>(ndk[k]) + alpha[k]) * inv[k];
  };
  for (int64_t doc = 0; doc < g.D; ++doc) {
    const int64_t first = m.doc_start[doc];
    if (first < 0) continue;  // no tokens
    {
      const int64_t len = g.doc_lengths[doc];
      m.uniforms.resize(static_cast<size_t>(len));
      document_uniforms(k0, k1, static_cast<uint32_t>(g.doc_ids[doc]), len, m.uniforms.data());
      for (int64_t j = 0; j < len; ++j) ++ndk[z_in[first + j * R]];
      for (int64_t k = 0; k < K; ++k) coef[k] = (static_cast<float>(ndk[k]) + alpha[k]) * inv[k];
      for (int64_t j = 0; j < len; ++j) {
        const int64_t slot = first + j * R;
        const int32_t w = g.words[slot];
        const int32_t old = z_in[slot];
        if (!keep_own) change(old, w, -1);
        const int32_t knew = dense_draw(coef, &nkw[static_cast<int64_t>(w) * Kp], m.eta_pad.data(), K, Kp, old,
                                        0.0f, coef[old], m.uniforms[j], m.qcum.data());
        if (keep_own) change(old, w, -1);
        change(knew, w, +1);
        z_out[slot] = knew;
      }
      for (int64_t k = 0; k < K; ++k) {
        ndk[k] = 0;
        coef[k] = alpha[k] * inv[k];
      }
    }
  }
}

// The sparse form (the buckets above), for many topics.
GJ_CLONES void collapsed_chain(const Grid& g, int64_t V, const int32_t* z_in, int32_t* z_out, const float* alpha, int64_t K,
                     float eta, uint32_t k0, uint32_t k1, bool keep_own, CollapsedScratch& m) {
  const int64_t R = g.R;
  const float v_eta = static_cast<float>(V) * eta;
  // ---- counts: n_k, and every word's (topic, count) list
  m.nk.assign(static_cast<size_t>(K), 0);
  m.word_len.assign(static_cast<size_t>(V), 0);  // first the words' token counts c_w
  document_starts(g, m.doc_start, z_out);
  for_each_token(g, m.doc_start, [&](int64_t i) {
    ++m.nk[z_in[i]];
    ++m.word_len[g.words[i]];
  });
  m.word_off.resize(static_cast<size_t>(V + 1));
  m.word_fill.resize(static_cast<size_t>(V + 1));
  int64_t cap = 0, tokens = 0;
  for (int64_t w = 0; w < V; ++w) {
    m.word_off[w] = static_cast<int32_t>(cap);
    m.word_fill[w] = static_cast<int32_t>(tokens);
    cap += std::min<int64_t>(m.word_len[w], K);
    tokens += m.word_len[w];
  }
  m.word_off[V] = static_cast<int32_t>(cap);
  m.word_fill[V] = static_cast<int32_t>(tokens);
  m.by_word.resize(static_cast<size_t>(tokens));  // the topics of each word's tokens, word by word, in visiting order
  for_each_token(g, m.doc_start, [&](int64_t slot) { m.by_word[m.word_fill[g.words[slot]]++] = z_in[slot]; });
  m.topic.resize(static_cast<size_t>(std::max<int64_t>(cap, 1)));
  m.count.resize(static_cast<size_t>(std::max<int64_t>(cap, 1)));
  m.mark.assign(static_cast<size_t>(K), -1);
  int64_t first = 0;
  for (int64_t w = 0; w < V; ++w) {
    const int64_t base = m.word_off[w], last = m.word_fill[w];
    int32_t n = 0;
    for (int64_t t = first; t < last; ++t) {
      const int32_t k = m.by_word[t];
      if (m.mark[k] < 0) {
        m.mark[k] = n;
        m.topic[base + n] = k;
        m.count[base + n] = 0;
        ++n;
      }
      ++m.count[base + m.mark[k]];
    }
    for (int32_t e = 0; e < n; ++e) m.mark[m.topic[base + e]] = -1;
    m.word_len[w] = n;
    first = last;
  }
  // ---- per-topic factors
  m.inv.resize(static_cast<size_t>(K));
  m.coef.resize(static_cast<size_t>(K));
  for (int64_t k = 0; k < K; ++k) {
    m.inv[k] = 1.0f / (static_cast<float>(m.nk[k]) + v_eta);
    m.coef[k] = alpha[k] * m.inv[k];
  }
  m.ndk.assign(static_cast<size_t>(K), 0);
  m.where.assign(static_cast<size_t>(K), -1);
  m.present.clear();
  m.qcum.resize(static_cast<size_t>(K + 1));
  int32_t* nk = m.nk.data();
  int32_t* ndk = m.ndk.data();
  float* inv = m.inv.data();
  float* coef = m.coef.data();
  auto add_doc_topic = [&](int32_t k) {
    m.where[k] = static_cast<int32_t>(m.present.size());
    m.present.push_back(k);
  };
  auto drop_doc_topic = [&](int32_t k) {
    const int32_t at = m.where[k], last = m.present.back();
    m.present[at] = last;
    m.where[last] = at;
    m.present.pop_back();
    m.where[k] = -1;
  };
  for (int64_t doc = 0; doc < g.D; ++doc) {
    const int64_t first = m.doc_start[doc];
    if (first < 0) continue;  // no tokens
    {
      const int64_t len = g.doc_lengths[doc];
      m.uniforms.resize(static_cast<size_t>(len));
      document_uniforms(k0, k1, static_cast<uint32_t>(g.doc_ids[doc]), len, m.uniforms.data());
      for (int64_t j = 0; j < len; ++j) {
        const int32_t k = z_in[first + j * R];
        if (ndk[k]++ == 0) add_doc_topic(k);
      }
      double r_sum = 0.0, s_sum = 0.0;
      for (int32_t k : m.present) {
        coef[k] = (static_cast<float>(ndk[k]) + alpha[k]) * inv[k];
        r_sum += static_cast<double>(ndk[k]) * inv[k];
      }
      for (int64_t k = 0; k < K; ++k) s_sum += static_cast<double>(alpha[k]) * inv[k];
      r_sum *= eta;
      s_sum *= eta;
      // n_k, n_dk and n_kw of topic k change by d (+1 or -1) for word w; s, r, coef follow
      auto change = [&](int32_t k, int32_t w, int32_t d, int64_t at) {
        const double before_s = static_cast<double>(alpha[k]) * inv[k];
        const double before_r = static_cast<double>(ndk[k]) * inv[k];
        nk[k] += d;
        if (d < 0 && ndk[k] == 1) drop_doc_topic(k);
        if (d > 0 && ndk[k] == 0) add_doc_topic(k);
        ndk[k] += d;
        inv[k] = 1.0f / (static_cast<float>(nk[k]) + v_eta);
        coef[k] = (static_cast<float>(ndk[k]) + alpha[k]) * inv[k];
        s_sum += eta * (static_cast<double>(alpha[k]) * inv[k] - before_s);
        r_sum += eta * (static_cast<double>(ndk[k]) * inv[k] - before_r);
        const int64_t base = m.word_off[w];
        int32_t* wt = &m.topic[base];
        int32_t* wc = &m.count[base];
        int32_t& n = m.word_len[w];
        if (at < 0) at = find_topic(wt, n, k);
        if (d > 0) {
          if (at < 0) {
            wt[n] = k;
            wc[n] = 1;
            ++n;
          } else {
            ++wc[at];
          }
        } else if (--wc[at] == 0) {  // swap with the last
          --n;
          wt[at] = wt[n];
          wc[at] = wc[n];
        }
      };
      for (int64_t j = 0; j < len; ++j) {
        const int64_t slot = first + j * R;
        const int32_t w = g.words[slot];
        const int32_t old = z_in[slot];
        if (!keep_own) change(old, w, -1, -1);
        const int64_t base = m.word_off[w];
        const int32_t* wt = &m.topic[base];
        const int32_t* wc = &m.count[base];
        const int64_t n = m.word_len[w];
        float* qcum = m.qcum.data();
        float q = 0.0f;
        for (int64_t e = 0; e < n; ++e) {
          q += static_cast<float>(wc[e]) * coef[wt[e]];
          qcum[e] = q;
        }
        double target = static_cast<double>(m.uniforms[j]) * (static_cast<double>(q) + r_sum + s_sum);
        int32_t knew = -1;
        int64_t at = -1;
        if (target < q) {
          const float t = static_cast<float>(target);
          int64_t e = 0;
          while (e < n - 1 && qcum[e] <= t) ++e;
          knew = wt[e];
          at = e;
        } else {
          target -= q;
          if (target < r_sum && !m.present.empty()) {
            double acc = 0.0;
            const int64_t np = static_cast<int64_t>(m.present.size());
            int64_t e = 0;
            for (; e < np - 1; ++e) {
              acc += eta * (static_cast<double>(ndk[m.present[e]]) * inv[m.present[e]]);
              if (acc > target) break;
            }
            knew = m.present[e];
          } else {
            target = std::max(0.0, target - r_sum);
            double acc = 0.0;
            int64_t k = 0;
            for (; k < K - 1; ++k) {
              acc += eta * (static_cast<double>(alpha[k]) * inv[k]);
              if (acc > target) break;
            }
            knew = static_cast<int32_t>(k);
          }
        }
        if (keep_own) {  // the planted wrong variant: drawn with the token's own counts in place
          change(old, w, -1, -1);
          at = -1;
        }
        change(knew, w, +1, at);
        z_out[slot] = knew;
      }
      for (int32_t k : m.present) {  // the next document starts from none of these topics
        ndk[k] = 0;
        coef[k] = alpha[k] * inv[k];
        m.where[k] = -1;
      }
      m.present.clear();
    }
  }
}

ffi::Error ZCollapsedImpl(ffi::Buffer<ffi::U32> key, ffi::Buffer<ffi::S32> z, ffi::Buffer<ffi::F32> alpha,
                          ffi::Buffer<ffi::F32> eta, ffi::Buffer<ffi::S32> words, ffi::Buffer<ffi::S32> docs,
                          ffi::Buffer<ffi::S32> doc_lengths, ffi::Buffer<ffi::S32> doc_ids,
                          ffi::Buffer<ffi::S32> word_counts, ffi::ResultBuffer<ffi::S32> z_out, int64_t keep_own,
                          int64_t sparse_from) {
  const auto zd = z.dimensions();
  if (zd.size() < 2) return ffi::Error::InvalidArgument("gibbsjax_lda_z_collapsed: z must be (..., S, R)");
  const int64_t S = trailing(zd, 2), R = trailing(zd, 1);
  const int64_t batch = leading_size(z_out->dimensions(), 2);
  const int64_t K = trailing(alpha.dimensions(), 1);
  const int64_t D = trailing(doc_lengths.dimensions(), 1);
  const int64_t V = trailing(word_counts.dimensions(), 1);
  struct In {
    int64_t lead, size;
  };
  const In ins[] = {{leading_size(key.dimensions(), 1), 2},       {leading_size(zd, 2), S * R},
                    {leading_size(alpha.dimensions(), 1), K},      {leading_size(eta.dimensions(), 1), 1},
                    {leading_size(words.dimensions(), 2), S * R},  {leading_size(docs.dimensions(), 2), S * R},
                    {leading_size(doc_lengths.dimensions(), 1), D}, {leading_size(doc_ids.dimensions(), 1), D + 1}};
  for (const In& in : ins) {
    if (in.lead != 1 && in.lead != batch)
      return ffi::Error::InvalidArgument("gibbsjax_lda_z_collapsed: an input is batched over other axes than z");
  }
  if (trailing(key.dimensions(), 1) != 2 || trailing(eta.dimensions(), 1) != 1 || K < 1)
    return ffi::Error::InvalidArgument("gibbsjax_lda_z_collapsed: key must be (..., 2), eta (..., 1), alpha (..., K)");
  parallel_for(batch, 1, batch * S * R * 64, [&](int64_t b) {
    thread_local CollapsedScratch scratch;
    const uint32_t* kp = key.typed_data() + batch_offset(ins[0].lead, b, 2);
    Grid g{words.typed_data() + batch_offset(ins[4].lead, b, S * R),
           docs.typed_data() + batch_offset(ins[5].lead, b, S * R),
           doc_lengths.typed_data() + batch_offset(ins[6].lead, b, D),
           doc_ids.typed_data() + batch_offset(ins[7].lead, b, D + 1),
           S, R, D};
    (K >= sparse_from ? collapsed_chain : collapsed_chain_dense)(g, V, z.typed_data() + batch_offset(ins[1].lead, b, S * R), z_out->typed_data() + b * S * R,
                    alpha.typed_data() + batch_offset(ins[2].lead, b, K), K,
                    eta.typed_data()[batch_offset(ins[3].lead, b, 1)], kp[0], kp[1], keep_own != 0, scratch);
  });
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(GibbsjaxLdaZPc, ZUpdateImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::U32>>()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::S32>>()
                                  .Attr<int64_t>("sparse_from")
                                  .Attr<int64_t>("keep_own")
                                  .Attr<int64_t>("frozen_counts"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(GibbsjaxLdaZCollapsed, ZCollapsedImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::U32>>()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Ret<ffi::Buffer<ffi::S32>>()
                                  .Attr<int64_t>("keep_own")
                                  .Attr<int64_t>("sparse_from"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(GibbsjaxLogDirichlet, LogDirichletImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::U32>>()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(GibbsjaxLdaCounts, CountsImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Ret<ffi::Buffer<ffi::S32>>()
                                  .Ret<ffi::Buffer<ffi::S32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(GibbsjaxLogDmSum, LogDmSumImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(GibbsjaxThreefry2x32, ThreefryImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::U32>>()
                                  .Arg<ffi::Buffer<ffi::U32>>()
                                  .Arg<ffi::Buffer<ffi::U32>>()
                                  .Arg<ffi::Buffer<ffi::U32>>()
                                  .Ret<ffi::Buffer<ffi::U32>>()
                                  .Ret<ffi::Buffer<ffi::U32>>());

extern "C" {
// The number of threads the kernels use (at least 1); draws do not depend on it.
__attribute__((visibility("default"))) void gibbsjax_set_num_threads(int n) { g_num_threads.store(n < 1 ? 1 : n); }
__attribute__((visibility("default"))) int gibbsjax_num_threads() { return g_num_threads.load(); }
// The version of these kernels' interface, checked by the Python side when it loads the library.
__attribute__((visibility("default"))) int gibbsjax_native_abi() { return 4; }
}
