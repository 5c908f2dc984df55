/*
 * The threshold solvers of the Panda offline model (thesis §3.2 and
 * Appendix B):
 *
 *   - T, the small/large packet threshold maximising t(T) of eq. 3-9;
 *   - the FHT sub-thresholds d_i of eq. 3-23 (packet sizes that best
 *     separate adjacent FHT flow-size classes), used as the bounds of the
 *     weight intervals of Algorithm 2;
 *   - the K-1 priority thresholds alpha of the M/M/1 sum-of-ratios model of
 *     Appendix B, both by the closed form and by direct numerical
 *     minimisation of the same objective;
 *   - the same alpha for the PIAS baseline (T = 0, counter = bytes sent).
 *
 * Units.  Packet sizes in samples include headers (the thesis's k, with
 * map(k) = ceil((k - header_len) / MSS)); thresholds T and d_i returned here
 * are in the same packet-size units.  Flow sizes and alpha are bytes of
 * payload (the datapath's counter adds payload bytes x weight).
 */
#ifndef PANDA_SOLVER_H
#define PANDA_SOLVER_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <panda/cdf.h>
#include <panda/model.h>
#include <panda/policy.h>
#include <panda/samples.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest packet size (headers included) the solvers accept. */
#define PANDA_SOLVER_MAX_SIZE (PANDA_MAX_PKT_SIZE + 1024)

/* ------------------------------------------------------------------------
 * Eq. 3-9 / 3-23: the packet-size threshold that best separates two groups
 * of flows.
 * ------------------------------------------------------------------------ */

/* t(x) is constant on plateaus; which x of the best plateau to pick. */
enum panda_solver_tie {
    PANDA_SOLVER_TIE_HIGH,     /* Largest maximiser (default: for the compensating
                         * g a larger T gives small packets more credit,
                         * eq. 3-20). */
    PANDA_SOLVER_TIE_LOW,      /* Smallest maximiser. */
    PANDA_SOLVER_TIE_MID,      /* Middle of the plateau holding the largest
                         * maximiser. */
};

struct panda_solver_separation {
    uint32_t x;             /* Chosen threshold (packet size, headers
                             * included): sizes < x are "small". */
    double t;               /* t(x), the objective. */
    uint32_t plateau_lo;    /* Every threshold in [plateau_lo, plateau_hi] */
    uint32_t plateau_hi;    /* reaches the same t. */
    double r_a, r_b;        /* Weighted mean R^x of group a and group b. */
    uint32_t s_min, s_max;  /* Smallest and largest sample size seen. */
};

/* Maximises mean_w R_a^x - mean_w R_b^x (eq. 3-9 with a = FLT, b = FHT;
 * eq. 3-23 with a = C_i, b = C_i+1) over integer x in [lo, hi] (clamped to
 * [s_min, s_max] of the samples; pass 0 and UINT32_MAX for the thesis's
 * range).  The flows' 'weight' fields are the w_f.  Returns NULL on success,
 * else a malloc()ed message. */
char *panda_solver_separate(const struct panda_samples_flow *const *a, size_t n_a,
                     const struct panda_samples_flow *const *b, size_t n_b,
                     uint32_t lo, uint32_t hi, uint32_t mss,
                     uint32_t header_len, enum panda_solver_tie,
                     struct panda_solver_separation *);

/* Eq. 3-9 for sample sets (convenience wrapper of panda_solver_separate()). */
char *panda_solver_find_T(const struct panda_samples *flt,
                    const struct panda_samples *fht, uint32_t mss,
                    uint32_t header_len, enum panda_solver_tie,
                    struct panda_solver_separation *);

/* Evaluates t(x) of eq. 3-9 directly from the definition (slow; used by the
 * tests to check the solver). */
double panda_solver_t_of(const struct panda_samples *a, const struct panda_samples *b,
                  uint32_t x, uint32_t mss, uint32_t header_len);

/* ------------------------------------------------------------------------
 * Eq. 3-23: FHT sub-thresholds from flow-size-labelled FHT flows.
 * ------------------------------------------------------------------------ */

#define PANDA_SOLVER_MAX_CLASSES (PANDA_MAX_WEIGHTS + 1)

struct panda_solver_subthresholds {
    size_t m;                           /* Number of classes. */
    double bound[PANDA_SOLVER_MAX_CLASSES];    /* d_1..d_{m-1}: flow-size class
                                         * bounds (payload bytes). */
    size_t n_flows[PANDA_SOLVER_MAX_CLASSES];  /* Flows per class. */
    size_t n;                           /* Sub-thresholds found. */
    struct {
        size_t cls;                     /* Separates class cls and cls+1
                                         * (0-based). */
        struct panda_solver_separation sep;
    } sub[PANDA_MAX_WEIGHTS];
    char *notes;                        /* malloc()ed; boundaries skipped
                                         * and why (or NULL). */
};

/* Splits 'fht' into m = n_bounds + 1 classes by flow size ('bounds'
 * strictly ascending, payload bytes) and, for each pair of adjacent
 * nonempty classes, finds the packet size maximising eq. 3-23 above the
 * previous threshold (the first one above 'T').  Boundaries whose best t is
 * not positive are skipped (noted).  Returns NULL on success, else a
 * malloc()ed message.  Free 'out' with panda_solver_subthresholds_destroy(). */
char *panda_solver_find_subthresholds(const struct panda_samples *fht,
                                const double *bounds, size_t n_bounds,
                                uint32_t T, uint32_t mss, uint32_t header_len,
                                enum panda_solver_tie,
                                struct panda_solver_subthresholds *out);
void panda_solver_subthresholds_destroy(struct panda_solver_subthresholds *);

/* Mapping coefficients eta_c = sum |f| / sum x_f of §3.2.4 (eq. 3-24) for
 * each flow-size class c of 'fht' (classes as above, m = n_bounds + 1),
 * where x_f is the counter growth of flow f under policy 'p' (weights
 * applied, small packets ignored as in the thesis) and |f| its payload in
 * the same packets.  eta_c = 1 for classes without flows.  With weights
 * >= 1, eta_c <= 1: a flow of |f| bytes reaches counter |f| / eta_c. */
void panda_solver_class_eta(const struct panda_samples *fht, const double *bounds,
                     size_t n_bounds, const struct panda_policy *p,
                     uint32_t header_len, double *eta);

/* ------------------------------------------------------------------------
 * Appendix B: priority thresholds.
 *
 * theta_l = F(alpha_l) - F(alpha_l-1), S_l = F(alpha_l), S_0 = 0, S_K = 1.
 * Objective (B.1, to minimise): with U_l = rho theta_l / (1 - rho S_l-1),
 *     B(alpha) = sum_l U_l (1 - S_l-1)
 *              = 1 - (1 - rho) J,  J = sum_l theta_l / (1 - rho S_l-1)
 * so minimising B is maximising the sum of ratios J of B.1's last line.
 * B is the approximated mean FCT of B.1 (in units of the mean service time
 * of a whole flow); K = 1 gives B = rho.
 * ------------------------------------------------------------------------ */

/* B(S) for cumulative probabilities S[0..K-2] (S_1..S_K-1). */
double panda_solver_alpha_objective(const double *S, int K, double rho);

/* Closed form (B.2, as understood here): all K ratios
 * theta_l / (1 - rho S_l-1) equal.  Then 1 - rho S_l = r^l with
 * r = (1 - rho)^(1/K), i.e. S_l = (1 - r^l) / rho.  Fills S[0..K-2]. */
void panda_solver_alpha_closed_form(int K, double rho, double *S);

struct panda_solver_alpha {
    int K;
    double rho;
    double scale;                   /* Bytes per CDF value unit. */
    double S_ideal[PANDA_MAX_LEVELS - 1];   /* Closed-form S_l. */
    double obj_ideal;               /* B at S_ideal (continuous). */

    /* Closed form mapped to integer byte thresholds through F^-1. */
    uint64_t alpha_cf[PANDA_MAX_LEVELS - 1];
    double S_cf[PANDA_MAX_LEVELS - 1];      /* F at alpha_cf. */
    double obj_cf;
    int n_adjusted;                 /* Thresholds raised to keep them
                                     * strictly ascending. */

    /* Direct numerical minimisation over integer byte thresholds. */
    uint64_t alpha_num[PANDA_MAX_LEVELS - 1];
    double S_num[PANDA_MAX_LEVELS - 1];
    double obj_num;
    double obj_num_uniform;         /* Result from the uniform start. */
    int iterations;                 /* Coordinate sweeps. */

    bool numeric_chosen;            /* obj_num < obj_cf by more than a
                                     * relative 1e-9 (else a tie: the
                                     * closed form is kept). */
    uint64_t alpha[PANDA_MAX_LEVELS - 1];   /* The better of the two. */
    char *notes;                    /* malloc()ed remarks or NULL. */

    /* panda_solver_find_alpha_bounded() only. */
    uint64_t alpha1_min;            /* The lower bound of alpha_1 asked. */
    bool bound_active;              /* The free optimum's alpha_1 was
                                     * below it: everything above is the
                                     * optimum under the bound. */
    uint64_t alpha_free[PANDA_MAX_LEVELS - 1];  /* The free optimum... */
    double obj_free;                /* ...and its objective B. */
};

/* Solves for K-1 thresholds in bytes from the flow-size CDF 'cdf' (values
 * in units of 'scale' bytes: 1 for bytes, MSS for packets) at load 'rho'.
 * Returns NULL on success, else a malloc()ed message (bad rho, K, CDF).
 * Free with panda_solver_alpha_destroy(). */
char *panda_solver_find_alpha(const struct panda_cdf *cdf, double scale,
                        double rho, int K, struct panda_solver_alpha *);

/* The same under alpha_1 >= alpha1_min bytes (e.g. the FLT counter's
 * excursions, panda_model_excursion()).  If the free optimum satisfies
 * the bound it is the answer, unchanged; otherwise alpha_1 sits on the
 * bound (B is convex in D_1 = 1 - rho S_1 with the rest optimal) and
 * alpha_2.. are re-optimised above it, closed form (the K - 1 remaining
 * ratios equal) and numerically, and the free optimum is kept in
 * alpha_free / obj_free. */
char *panda_solver_find_alpha_bounded(const struct panda_cdf *cdf,
                                      double scale, double rho, int K,
                                      uint64_t alpha1_min,
                                      struct panda_solver_alpha *);
void panda_solver_alpha_destroy(struct panda_solver_alpha *);

#ifdef __cplusplus
}
#endif

#endif /* solver.h */
