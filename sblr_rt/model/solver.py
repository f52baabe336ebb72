"""Block coordinate proximal descent (paper Algorithm 2) for (multinomial) SBLR.

The unknowns are ``m`` free classes' factors ``U`` (m, s, r), ``V`` (m, t, r) and
intercepts ``b`` (m,); ``m = 1`` is the binary problem of the paper and ``m > 1`` the
multinomial form of its section 7.3 (reference class with zero score). The score of epoch
``i`` for class ``c`` is ``tr(U_c^T X_i V_c) + b_c``.

Cost per iteration: the U-block computes ``A = X V`` once (one pass over X) and every
backtracking trial then only needs ``<A_i, U>`` (``O(n s r m)``); the V-block likewise
uses ``B = X^T U``. An iteration is two passes over the data. The big products run in the
dtype of ``X`` (float32 stays float32, no copy); all the small state (scores, losses,
gradients, factors) is float64 so that the sufficient-decrease tests and ``q^k`` are
not swamped by float32 rounding.

One algorithm (the block coordinate proximal descent and its batched form shared with
:mod:`.path`; the products with the data are in :mod:`.products`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import scipy.linalg
from threadpoolctl import ThreadpoolController

from sblr_rt.model.datafit import Logistic
from sblr_rt.model.penalties import ElasticNet
from sblr_rt.model.products import x_times_u, x_times_v
from sblr_rt.validation.constraints import apply_constraints, integer, number, option

__all__ = [
    "KERNELS",
    "SOLVER_RULES",
    "BCPDBatch",
    "SolverResult",
    "SolverSettings",
    "bcpd",
    "single_threaded_blas",
    "stationarity_residual",
    "svd_init",
]

_MAX_TRIALS = 200
#: Step-size trials evaluated per vectorised round of :func:`_block`.
_TRIALS_AT_ONCE = 3

_CONTROLLER = None

#: The implementations of a block update: ``"numpy"`` (:func:`_block`, vectorised over
#: runs and trials) and ``"numba"`` (:func:`sblr_rt.model._kernels.logistic_block`, one
#: compiled call; binary logistic problems, the numpy code for the multinomial).
KERNELS = ("numpy", "numba")


def single_threaded_blas():
    """Return a context manager that limits BLAS/OpenMP pools to one thread.

    The ``threadpoolctl`` controller is built once (scanning the loaded libraries costs
    milliseconds, more than a whole small fit iteration) and reused.
    """
    global _CONTROLLER
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1)


@dataclass(frozen=True)
class SolverSettings:
    """The stopping and step-size rules of the solver: the one place of their defaults.

    Parameters
    ----------
    tol : float
        Stop when the relative change ``q^k`` (paper eq. 10) is at most ``tol``.
    max_iter : int
        Maximum number of iterations.
    eta : float
        Step-size growth factor ``eta > 1``.
    L_min : float
        Lower bound of the step parameters.
    kernel : {"numpy", "numba"}
        The block update's implementation (:data:`KERNELS`): ``"numpy"`` is Algorithm 2
        as written and recorded; ``"numba"`` makes the same steps in one compiled call per
        block (binary problems), equal up to the order of floating-point sums.
    """

    tol: float = 1e-3
    max_iter: int = 500
    eta: float = 2.0
    L_min: float = 1e-4
    kernel: str = "numpy"

    def __post_init__(self):
        apply_constraints(self, SOLVER_RULES)


#: What each field of :class:`SolverSettings` accepts (the estimator's own ranges:
#: :attr:`SparseBilinearLogisticRegression._parameter_constraints`).
SOLVER_RULES = {
    "tol": number(lambda v: v >= 0, "be a number >= 0"),
    "max_iter": integer(lambda v: v >= 1, "be an integer >= 1"),
    "eta": number(lambda v: v > 1, "be a number > 1 (the step-size growth factor)"),
    "L_min": number(lambda v: v > 0, "be a number > 0"),
    "kernel": option(*KERNELS),
}


@dataclass
class SolverResult:
    """Output of :func:`bcpd`.

    Attributes
    ----------
    U : ndarray, shape (m, s, r)
    V : ndarray, shape (m, t, r)
    b : ndarray, shape (m,)
    objective : ndarray, shape (n_iter + 1,)
        ``F^0, ..., F^k``.
    n_iter : int
    converged : bool
        Whether ``q^k <= tol`` was reached before ``max_iter``.
    L_u, L_v : float
        Last accepted step parameters (used to warm-start).
    n_trials : int
        Total number of sufficient-decrease trials over both blocks.
    """

    U: np.ndarray
    V: np.ndarray
    b: np.ndarray
    objective: np.ndarray
    n_iter: int
    converged: bool
    L_u: float
    L_v: float
    n_trials: int = 0
    q: list = field(default_factory=list)


def svd_init(x_mean, rank):
    """Return the paper's starting factors from the mean sample (section 5.1).

    Parameters
    ----------
    x_mean : ndarray, shape (s, t)
        Mean of the samples.
    rank : int
        Number of components ``r``.

    Returns
    -------
    U0 : ndarray, shape (s, r)
        Minus the first ``r`` left singular vectors.
    V0 : ndarray, shape (t, r)
        The first ``r`` right singular vectors.

    Notes
    -----
    The leading singular vectors come from the eigenvectors of the smaller Gram matrix
    (cheaper than a full SVD); when a requested singular value is too small for that to be
    accurate, a full SVD is used instead. Singular vectors
    are defined up to sign; the sign is whatever LAPACK returns.
    """
    M = np.asarray(x_mean, dtype=np.float64)
    s, t = M.shape
    k = min(s, t)
    transposed = s < t
    A = M.T if transposed else M  # A has at least as many rows as columns
    evals, evecs = scipy.linalg.eigh(
        A.T @ A, subset_by_index=[k - rank, k - 1], check_finite=False
    )
    evals, evecs = evals[::-1], evecs[:, ::-1]
    if evals[0] > 0 and evals[-1] > 1e-8 * evals[0]:
        right = evecs
        left = (A @ right) / np.sqrt(evals)
        if transposed:
            left, right = right, left
    else:
        left, _, right_t = np.linalg.svd(M, full_matrices=False)
        left, right = left[:, :rank], right_t[:rank].T
    return -np.ascontiguousarray(left), np.ascontiguousarray(right)


def _scores(A, Z, b):
    # A (K, m, n, p), Z (K, m, p), b (K, m) -> scores (K, n, m)
    return np.matmul(A, Z[..., None])[..., 0].swapaxes(-1, -2) + b[:, None, :]


def _grad(A, gs):
    # gs (K, n, m) -> (K, m, p)
    return np.matmul(gs.swapaxes(-1, -2)[..., None, :], A)[..., 0, :]


def _block(datafit, penalty, A, Z, b, L_prev, eta, L_min):
    """Proximal-linear updates of (Z, b) with the adaptive step (eq. 13-16), for K runs.

    The K runs share the datafit (the labels, or one row of labels per run: see
    :meth:`~sblr_rt.model.datafit.Logistic.take`) and nothing else: each has its own factors,
    penalties and step parameter, and its own sufficient-decrease test. Each run accepts the
    first ``n >= -1`` whose step passes, as the paper's rule asks. The test
    ``l(new) <= l(old) + <grad, d> + L/2 |d|^2`` is evaluated in the equivalent form
    ``D <= L/2 |d|^2`` with ``D`` the datafit's Bregman divergence, which is accurate even
    when the step is at rounding level.

    The trials ``n, n + 1, ..., n + _TRIALS_AT_ONCE - 1`` of every open run are evaluated
    in one vectorised round, and each run takes the first that passes: the same step as
    trying them one by one (a block needs two trials or more, each a few small array
    operations, so one round instead of two or three saves the interpreter's rounds).

    Parameters
    ----------
    datafit : Logistic | Multinomial
        The runs' loss (its ``loss_grad``, ``bregman`` and ``loss``).
    penalty : ElasticNet
        The block's penalty, weights one per run (its ``prox``).
    A : ndarray, shape (K, m, n, p)
        ``X V`` (U-block) or ``X^T U`` (V-block) of each run.
    Z : ndarray, shape (K, m, p)
    b : ndarray, shape (K, m)
    L_prev : ndarray, shape (K,)

    Returns
    -------
    Z_new, b_new, L, loss_new, loss0, trials
        Shapes (K, m, p), (K, m), (K,), (K,), (K,), (K,); ``trials`` counts the distinct
        step parameters the rule went through up to the accepted one.
    """
    K = Z.shape[0]
    f0 = _scores(A, Z, b)
    loss0, gs, cache = datafit.loss_grad(f0)
    G = _grad(A, gs)
    gb = gs.sum(axis=-2)
    Z_new, b_new = np.empty_like(Z), np.empty_like(b)
    L_acc, loss_new = np.empty(K), np.empty(K)
    trials = np.zeros(K, dtype=int)
    last_L = np.full(K, np.nan)
    open_ = np.ones(K, dtype=bool)  # runs still looking for their step
    w = _TRIALS_AT_ONCE
    for n0 in range(-1, _MAX_TRIALS, w):
        runs = np.flatnonzero(open_)
        sel = slice(None) if runs.size == K else runs  # all open: views, not copies
        Lc = np.maximum(L_min, L_prev[sel, None] * eta ** np.arange(n0, n0 + w))  # (k, w)
        # A run clamped at L_min made that trial already; the rule moves on to larger L.
        fresh = Lc != np.concatenate([last_L[sel, None], Lc[:, :-1]], axis=1)
        last_L[sel] = Lc[:, -1]
        # Candidates (k, w, ...): run runs[i] with step parameter Lc[i, c].
        Zi, bi = Z[sel][:, None], b[sel][:, None]
        L4 = Lc[:, :, None, None]
        Zt = penalty.take(sel).prox(Zi, G[sel][:, None], L4)
        bt = bi - gb[sel][:, None] / Lc[:, :, None]
        ft = np.matmul(A[sel][:, None], Zt[..., None])[..., 0].swapaxes(-1, -2) + bt[..., None, :]
        D = datafit.trials(sel).bregman(tuple(c[sel][:, None] for c in cache), ft)
        step2 = ((Zt - Zi) ** 2).sum(axis=(-1, -2)) + ((bt - bi) ** 2).sum(axis=-1)
        ok = (D <= 0.5 * Lc * step2) & fresh
        passed = ok.any(axis=1)
        first = np.argmax(ok, axis=1)
        # Trials made: the fresh ones up to the accepted one (all of them if none passed).
        upto = np.arange(w)[None, :] <= np.where(passed, first, w - 1)[:, None]
        trials[sel] += (fresh & upto).sum(axis=1)
        if passed.any():
            rows = np.flatnonzero(passed)
            acc, col = runs[rows], first[rows]
            Z_new[acc], b_new[acc], L_acc[acc] = Zt[rows, col], bt[rows, col], Lc[rows, col]
            loss_new[acc] = datafit.take(acc).loss(ft[rows, col])
            open_[acc] = False
        if not open_.any():
            return Z_new, b_new, L_acc, loss_new, np.atleast_1d(loss0), trials
    raise FloatingPointError(
        f"no step size passed the sufficient-decrease test after {trials.max()} trials "
        f"(last L={np.nanmax(last_L):.3g}); the data probably contain values too large to "
        "represent"
    )


def _block_compiled(datafit, penalty, A, Z, b, L_prev, eta, L_min):
    """:func:`_block` by the compiled kernel, for a binary logistic datafit (m = 1)."""
    from sblr_rt.model._kernels import logistic_block  # numba is imported on first use

    y, w = datafit.rows
    K = Z.shape[0]
    l1, l2 = (np.broadcast_to(v, (K,)) for v in (penalty.l1, penalty.l2))
    Z_new, b_new, L, loss_new, loss0, trials = logistic_block(
        np.ascontiguousarray(A[:, 0]),
        np.ascontiguousarray(Z[:, 0]),
        np.ascontiguousarray(b[:, 0]),
        y,
        w,
        np.ascontiguousarray(l1, dtype=np.float64),
        np.ascontiguousarray(l2, dtype=np.float64),
        np.ascontiguousarray(L_prev, dtype=np.float64),
        float(eta),
        float(L_min),
        _MAX_TRIALS,
    )
    if np.any(trials < 0):
        raise FloatingPointError(
            f"no step size passed the sufficient-decrease test after {_MAX_TRIALS} trials; "
            "the data probably contain values too large to represent"
        )
    return Z_new.reshape(K, 1, -1), b_new.reshape(K, 1), L, loss_new, loss0, trials


class BCPDBatch:
    """K runs of block coordinate proximal descent sharing one datafit, advanced by block.

    The batch owns the small state of each run (factors, intercepts, penalties, step
    parameters, objective trace); the caller supplies the products with the data:
    ``A = X V`` of the runs in :attr:`active` before :meth:`u_step`, and ``B = X^T U``
    before :meth:`v_step`. :func:`bcpd` is a batch of one;
    :func:`sblr_rt.model.penalty_path.fit_penalty_paths` runs many penalty paths through batches
    whose products come from one pass over ``X``. Both therefore make the same updates.

    Parameters
    ----------
    datafit : Logistic | Multinomial
        Loss as a function of the scores (n, m).
    U0 : ndarray, shape (K, m, s, r)
    V0 : ndarray, shape (K, m, t, r)
    b0 : ndarray, shape (K, m)
        Starting points.
    penalty_u, penalty_v : ElasticNet
        Penalties on U (``mu1, mu2``) and on V (``nu1, nu2``), their weights one per run
        (arrays of shape (K,)) or shared.
    settings : SolverSettings
        Stopping and step-size rules, and the block update's implementation (the
        multinomial datafit always takes the numpy one).
    L_u0, L_v0 : array-like of shape (K,) | None
        Step parameters before the first iteration (default ``settings.L_min``).
    """

    def __init__(
        self, datafit, U0, V0, b0, penalty_u, penalty_v, settings=SolverSettings(), *,
        L_u0=None, L_v0=None,
    ):  # fmt: skip
        K, self.m, self.s, self.r = np.shape(U0)
        self.t = np.shape(V0)[2]
        self.datafit = datafit
        self.settings = settings
        compiled = settings.kernel == "numba" and isinstance(datafit, Logistic)
        self._block = _block_compiled if compiled else _block
        self.U = np.array(U0, dtype=np.float64).reshape(K, self.m, self.s * self.r)
        self.V = np.array(V0, dtype=np.float64).reshape(K, self.m, self.t * self.r)
        self.b = np.array(b0, dtype=np.float64).reshape(K, self.m)
        self.penalty_u, self.penalty_v = (
            ElasticNet(*(np.array(np.broadcast_to(w, (K,)), dtype=np.float64) for w in pen))
            for pen in ((penalty_u.l1, penalty_u.l2), (penalty_v.l1, penalty_v.l2))
        )
        L_min = settings.L_min
        self.L_u = np.full(K, L_min) if L_u0 is None else np.array(L_u0, dtype=np.float64)
        self.L_v = np.full(K, L_min) if L_v0 is None else np.array(L_v0, dtype=np.float64)
        self.objective = [[] for _ in range(K)]
        self.q = [[] for _ in range(K)]
        self.k = np.zeros(K, dtype=int)
        self.converged = np.zeros(K, dtype=bool)
        self.stopped = np.zeros(K, dtype=bool)
        self.n_trials = np.zeros(K, dtype=int)
        self._pen_v = self.penalty_v.values(self.V)
        self._w_norm = self._norm(self.U, self.V, self.b)
        self._U_prev = np.empty_like(self.U)
        self._b_prev = np.empty_like(self.b)
        self._update_active()

    @staticmethod
    def _norm(U, V, b):
        return np.sqrt(
            np.einsum("kmp,kmp->k", U, U) + np.einsum("kmp,kmp->k", V, V)
            + np.einsum("km,km->k", b, b)
        )  # fmt: skip

    def done(self, j):
        """Whether run ``j`` converged, ran ``max_iter`` iterations or was stopped."""
        return bool(self.converged[j] or self.stopped[j] or self.k[j] >= self.settings.max_iter)

    def stop(self, j):
        """End run ``j`` where it is (not converged), until :meth:`restart`."""
        self.stopped[j] = True
        self._update_active()

    def _update_active(self):
        self.active = np.flatnonzero(
            ~self.converged & ~self.stopped & (self.k < self.settings.max_iter)
        )
        # Every run active (always so for a batch of one): index by slice, no copies.
        self._sel = slice(None) if self.active.size == self.k.size else self.active

    def V3(self, runs=None):
        """Return the active runs' V (or those of ``runs``) as (n * m, t, r) for ``x_times_v``."""
        return self.V[self._sel if runs is None else runs].reshape(-1, self.t, self.r)

    def U3(self, runs=None):
        """Return the active runs' U (or those of ``runs``) as (n * m, s, r) for ``x_times_u``."""
        return self.U[self._sel if runs is None else runs].reshape(-1, self.s, self.r)

    def _datafit(self):
        """Return the datafit of the active runs (their rows of labels, if per run)."""
        return self.datafit if isinstance(self._sel, slice) else self.datafit.take(self._sel)

    def u_step(self, A):
        """Update (U, b) of the active runs by eq. 11a/12a; ``A`` (n_active * m, n, s r)."""
        j = self._sel
        A = A.reshape(-1, self.m, *A.shape[1:])
        self.k[j] += 1
        U, b = self.U[j], self.b[j]
        pen, rules = self.penalty_u.take(j), self.settings
        U_new, b_hat, self.L_u[j], _, loss0, trials = self._block(
            self._datafit(), pen, A, U, b, self.L_u[j], rules.eta, rules.L_min
        )
        self.n_trials[j] += trials
        first = np.flatnonzero(self.k[j] == 1)
        if first.size:
            F0 = loss0 + pen.values(U) + self._pen_v[j]
            for i in first:
                self.objective[self.active[i]].append(float(F0[i]))
        self._U_prev[j], self._b_prev[j] = U, b
        self.U[j], self.b[j] = U_new, b_hat

    def v_step(self, B):
        """Update (V, b) of the active runs by eq. 11b/12b, then ``F^k`` and ``q^k``."""
        j = self._sel
        B = B.reshape(-1, self.m, *B.shape[1:])
        V, U = self.V[j], self.U[j]
        pen, rules = self.penalty_v.take(j), self.settings
        V_new, b_new, self.L_v[j], loss_v, _, trials = self._block(
            self._datafit(), pen, B, V, self.b[j], self.L_v[j], rules.eta, rules.L_min
        )
        self.n_trials[j] += trials
        self._pen_v[j] = pen_v = pen.values(V_new)
        F = loss_v + self.penalty_u.take(j).values(U) + pen_v
        step = self._norm(U - self._U_prev[j], V_new - V, b_new - self._b_prev[j])
        w_norm = self._w_norm[j]
        q = np.empty(F.shape)
        for i, run in enumerate(self.active.tolist()):
            F_prev = self.objective[run][-1]
            self.objective[run].append(float(F[i]))
            q[i] = max(step[i] / (1.0 + w_norm[i]), abs(F[i] - F_prev) / (1.0 + F_prev))
            self.q[run].append(float(q[i]))
        self.converged[j] = q <= self.settings.tol
        self.V[j], self.b[j] = V_new, b_new
        self._w_norm[j] = self._norm(self.U[j], V_new, b_new)
        self._update_active()

    def restart(self, j, l1_u, l2_u, l1_v, l2_v, *, U0=None, V0=None, b0=None):
        """Start run ``j`` on new penalties, warm from its point or cold from a given one.

        A warm start keeps the step parameters, as a warm-started estimator does; a cold
        start (``U0`` (m, s, r), ``V0`` (m, t, r), ``b0`` (m,) given) resets them to
        ``L_min``.
        """
        if U0 is not None:
            self.U[j] = np.reshape(U0, (self.m, -1))
            self.V[j] = np.reshape(V0, (self.m, -1))
            self.b[j] = b0
            self.L_u[j] = self.L_v[j] = self.settings.L_min
        self.penalty_u = self.penalty_u.with_run(j, l1_u, l2_u)
        self.penalty_v = self.penalty_v.with_run(j, l1_v, l2_v)
        self.objective[j], self.q[j] = [], []
        self.k[j], self.converged[j], self.stopped[j], self.n_trials[j] = 0, False, False, 0
        self._pen_v[j] = ElasticNet(l1_v, l2_v).values(self.V[j : j + 1])[0]
        self._w_norm[j] = self._norm(self.U[j : j + 1], self.V[j : j + 1], self.b[j : j + 1])[0]
        self._update_active()

    def result(self, j):
        """Return run ``j``'s current state as a :class:`SolverResult`."""
        return SolverResult(
            U=self.U[j].reshape(self.m, self.s, self.r).copy(),
            V=self.V[j].reshape(self.m, self.t, self.r).copy(),
            b=self.b[j].copy(),
            objective=np.asarray(self.objective[j]),
            n_iter=int(self.k[j]),
            converged=bool(self.converged[j]),
            L_u=float(self.L_u[j]),
            L_v=float(self.L_v[j]),
            n_trials=int(self.n_trials[j]),
            q=list(self.q[j]),
        )


def bcpd(
    X,
    datafit,
    U0,
    V0,
    b0,
    penalty_u,
    penalty_v,
    settings=SolverSettings(),
    *,
    L_u0=None,
    L_v0=None,
    x_scale=1.0,
    **changes,
):
    """Run block coordinate proximal descent (paper Algorithm 2).

    Parameters
    ----------
    X : ndarray, shape (n, s, t), C-contiguous float32 or float64
        Samples.
    datafit : Logistic | Multinomial
        Loss as a function of the scores (n, m).
    U0 : ndarray, shape (m, s, r)
    V0 : ndarray, shape (m, t, r)
    b0 : ndarray, shape (m,)
        Starting point.
    penalty_u, penalty_v : ElasticNet
        Penalties ``r_1`` on U and ``r_2`` on V.
    settings : SolverSettings
        Stopping and step-size rules (``tol``, ``max_iter``, ``eta``, ``L_min``) and the
        block update's implementation (``kernel``).
    L_u0, L_v0 : float | None
        Step parameters ``L^0`` before the first iteration; default ``L_min`` (so the
        first trials search upwards from ``L_min``).
    x_scale : float
        The samples of the problem are ``X / x_scale``: the products with X are divided
        by it (through the small factors), which saves a scaled copy of X. 1.0: X as
        given, and the products are exactly those of X.
    **changes
        Fields of ``settings`` to replace, as ``tol=1e-6``.

    Returns
    -------
    SolverResult
    """
    if changes:
        settings = replace(settings, **changes)
    L0 = [None if L is None else [float(L)] for L in (L_u0, L_v0)]
    run = BCPDBatch(
        datafit,
        np.asarray(U0)[None],
        np.asarray(V0)[None],
        np.asarray(b0)[None],
        penalty_u,
        penalty_v,
        settings,
        L_u0=L0[0],
        L_v0=L0[1],
    )
    if x_scale == 1.0:
        while run.active.size:
            run.u_step(x_times_v(X, run.V3()))
            run.v_step(x_times_u(X, run.U3()))
    else:
        inv = 1.0 / x_scale
        while run.active.size:
            run.u_step(x_times_v(X, run.V3() * inv))
            run.v_step(x_times_u(X, run.U3() * inv))
    return run.result(0)


def stationarity_residual(X, datafit, U, V, b, penalty_u, penalty_v):
    """Return the norm of the minimum-norm subgradient of F at (U, V, b).

    The measure is ``dist(0, dF(U, V, b))``: the Euclidean norm of the component-wise
    distances from ``-grad`` to the penalty's subdifferential over all entries of U and V,
    together with the intercept gradient. It is zero exactly at a first-order stationary
    point of the (non-convex) objective.

    Parameters
    ----------
    X : ndarray, shape (n, s, t)
    datafit : Logistic | Multinomial
    U : ndarray, shape (m, s, r)
    V : ndarray, shape (m, t, r)
    b : ndarray, shape (m,)
    penalty_u, penalty_v : ElasticNet

    Returns
    -------
    float
    """
    m, s, r = U.shape
    t = V.shape[1]
    X = np.ascontiguousarray(X, dtype=np.float64)
    Uf = np.asarray(U, dtype=np.float64).reshape(m, s * r)
    Vf = np.asarray(V, dtype=np.float64).reshape(m, t * r)
    A = x_times_v(X, Vf.reshape(m, t, r))[None]
    b = np.asarray(b, dtype=np.float64).reshape(1, m)
    _, gs, _ = datafit.loss_grad(_scores(A, Uf[None], b))
    res_u = penalty_u.subgradient_residual(Uf, _grad(A, gs)[0])
    B = x_times_u(X, Uf.reshape(m, s, r))[None]
    res_v = penalty_v.subgradient_residual(Vf, _grad(B, gs)[0])
    gb = gs[0].sum(axis=0)
    return float(np.sqrt(np.vdot(res_u, res_u) + np.vdot(res_v, res_v) + gb @ gb))
