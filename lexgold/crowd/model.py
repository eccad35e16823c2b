"""A rater model fitted to real rating logs: the crowd behind every lexgold simulation.

A rating ``x`` of pair ``i`` by rater ``j`` on a scale ``low..high`` with step ``h`` is

    x = clip(round_h(r_j(t_i) + sigma * m_i * v_j * e), low, high),
    r_j(t) = expit(s_j logit(t) + 4 b_j) for 0 < t < 1, else t     (:func:`rater_means`)

with probability ``1 - lapse``, else a value drawn uniformly from the scale's steps (a lapse: the
rater clicked anywhere). All quantities are relative to the scale (``0`` = ``low``, ``1`` =
``high``), so a crowd fitted on 0-10 simulates a 0-6 study unchanged
(:func:`rescale_crowd`):

- ``t_i``, the pair's latent score, and ``m_i``, the pair's own spread (some pairs divide a
  crowd more than others), drawn jointly from a distribution on a grid (latent scores over
  ``[-0.6, 1.6]``: beyond the scale's ends is what piles ratings at 0 or 6; log spreads over
  ``[-1.6, 1.2]``), fitted as a nonparametric maximum-likelihood mixture (Laird 1978, NPMLE;
  weights by EM); ``tau`` reports the SD of ``log m``;
- ``e``, the latent error, Student-t with ``df`` degrees of freedom (heavier tails than normal;
  ``df = None`` is normal); ``sigma`` its scale;
- where rater identity is known, each rater's bias ``b_j`` (its shift at the scale's middle),
  scale ``s_j = exp(.)`` and noise ``v_j = exp(.)``, ``(b_j, log s_j, log v_j)`` jointly
  normal (SDs ``bias_sd``, ``scale_sd``, ``noise_sd`` and their ``correlation``): the subject
  model of ITU-T P.913 (2021) section 12.4 and Netflix SUREAL (Li & Bampis 2017; bias and
  inconsistency per subject), with a per-subject scale as in Janowski & Pinson (2015). Bias and
  scale act on the logit of the pair's score, so raters part most in the scale's middle and
  agree at its ends, the anchors they share, and a pair beyond an end is unanimous but for
  noise (raters who part as much at the ends as in the middle leave too few near-unanimous
  pairs in every rater-identified log: docs/process.md, "The lower tail"); and a share
  ``spammers`` of raters who answer uniformly at random (a rater-level mixture, Raykar et al.
  2010). Without rater identity (SimVerb's ``r1..r10`` are slots, not people) these are not
  identifiable: the fit has none and ``sigma`` holds the raters' differences too.

Ordinal rounding: a rating ``k`` on the scale stands for a latent response in ``[k - h/2,
k + h/2)``, the ends open (clipping). A rating halfway between two steps (WordSim-353's 8.5 on
its 0-10 scale of whole numbers) (and any value between two steps: 8.25, 6.8) is read as the
rater's hesitation between the two steps around it: its likelihood is the probability of either
step, ``[k - h/2, k + 1.5 h)`` (interval censoring); simulated ratings fall on the steps only.
A value outside the scale is an error.

The fit (:func:`fit`) is maximum likelihood by (generalised) EM on the grid: the E-step gives
each pair's posterior over (latent score, spread); the M-step updates the grid weights in closed
form, each rater's bias, scale and noise by numerical maximisation of the expected
log-likelihood (scipy), and ``lapse`` and ``df`` by maximising the marginal likelihood (scipy's
L-BFGS-B); ``sigma`` is a fixed unit (the log's pooled within-pair SD), the spreads on the grid
carrying the noise's level. A rater's spammer probability is the posterior of the uniform
component against the honest model's leave-one-out predictive probability of each of its
ratings; its ratings enter the pairs' posteriors weighted by ``1 - P(spammer)`` (a variational
approximation of the rater-level mixture). The spreads across raters are the spread of the
raters' estimates less their approximate sampling variance, their correlations the estimates'
covariances over those spreads. Beyond :data:`ONE_BY_ONE` raters their biases, scales and
noises are updated all at once (:func:`_raters_at_once`: Newton steps, analytic derivatives),
``lapse`` and ``df`` by the M-step on the E-step's expected counts (:func:`_lapse_df_step`,
expectation conditional maximisation: no recomputation of the pairs' likelihoods), and grid
probabilities are computed only for the (rater, code) cells the log fills and the (grid point,
spread) cells of positive weight, by blocks, once an iteration for the spammer step and the
pairs' likelihoods (:func:`_cells_pass`): memory grows
with raters and pairs, never with ratings times the grid; that fit follows, and stops on the gain
of, its variational bound (the pairs' log-likelihood plus the spammers' part:
:func:`_spammer_terms`), accelerated by SQUAREM (:func:`_fit_at_once`). A log without
identity can be fitted with rater spreads held (``fit(..., raters=...)``): each rating is then a
fresh rater's and its likelihood is averaged over raters (Gauss-Hermite quadrature).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import optimize, sparse, special

from lexgold.errors import InputError
from lexgold.ratings import ANONYMOUS
from lexgold.ratings.long import scale_points

#: latent grid over the scale, relative units; nodes of the pair spread
GRID = np.linspace(-0.6, 1.6, 45)
SPREADS = np.linspace(-1.6, 1.2, 15)
#: the logit of each grid point (clipped as :func:`rater_means` clips) and which lie inside
#: the scale: the rater step's entries index them instead of taking a logit each
_GRID_LOGIT = special.logit(np.clip(GRID, 1e-12, 1 - 1e-12))
_GRID_INSIDE = (GRID > 0) & (GRID < 1)
FORMAT = "lexgold-crowd/1"
QUANTILES = (0.1, 0.5, 0.9)


@dataclass(frozen=True)
class Raters:
    """How raters differ, where rater identity was known (relative units; scales and noises
    as SDs of their logarithms)."""

    bias_sd: float = 0.0
    scale_sd: float = 0.0
    noise_sd: float = 0.0
    spammers: float = 0.0
    #: correlations of (bias, log scale), (bias, log noise), (log scale, log noise)
    correlation: tuple = (0.0, 0.0, 0.0)

    def cholesky(self) -> np.ndarray:
        """``L`` with ``L @ L.T`` the covariance of (bias, log scale, log noise): a rater is
        ``L @ z``, ``z`` standard normal."""
        sd = np.array([self.bias_sd, self.scale_sd, self.noise_sd], float)
        r = np.eye(3)
        r[0, 1], r[0, 2], r[1, 2] = self.correlation
        r = np.triu(r) + np.triu(r, 1).T
        values, vectors = np.linalg.eigh(r)         # nearest valid correlation, if need be
        r = (vectors * np.maximum(values, 1e-9)) @ vectors.T
        r /= np.sqrt(np.outer(np.diag(r), np.diag(r)))
        return sd[:, None] * np.linalg.cholesky(r)


@dataclass(frozen=True)
class CrowdModel:
    """A fitted crowd (module docstring). ``scale`` is ``(low, high, step)`` of the log it was
    fitted to (or of the study it was rescaled to); every other figure is relative to it."""

    grid: tuple
    spreads: tuple
    weights: tuple
    sigma: float
    df: float | None
    lapse: float
    raters: Raters | None
    scale: tuple = (0.0, 6.0, 1.0)
    fitted_to: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    name: str = ""

    @property
    def tau(self) -> float:
        """SD of the pairs' log spread under the fitted weights."""
        over = np.asarray(self.weights, float).sum(axis=0)
        mean = np.average(self.spreads, weights=over)
        return float(np.sqrt(np.average((np.asarray(self.spreads) - mean) ** 2, weights=over)))

    @property
    def typical_sigma(self) -> float:
        """``sigma`` times the pairs' geometric mean spread (relative units)."""
        over = np.asarray(self.weights, float).sum(axis=0)
        return float(self.sigma * np.exp(np.average(self.spreads, weights=over)))

    def to_json(self) -> str:
        data = {"format": FORMAT, **asdict(self)}
        data["grid"] = [round(float(g), 6) for g in self.grid]
        data["spreads"] = [round(float(g), 6) for g in self.spreads]
        data["weights"] = [[float(f"{w:.6g}") for w in row] for row in self.weights]
        return json.dumps(data, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str, *, source: str | Path | None = None) -> "CrowdModel":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise InputError(f"not valid JSON: {err.msg}", path=source, line=err.lineno) \
                from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InputError(f"not a lexgold crowd (expected \"format\": \"{FORMAT}\")",
                             path=source, field="format")
        data.pop("format")
        try:
            raters = data.pop("raters")
            model = cls(**{**data, "grid": tuple(data["grid"]),
                           "spreads": tuple(data["spreads"]),
                           "weights": tuple(tuple(row) for row in data["weights"]),
                           "scale": tuple(data["scale"]),
                           "raters": None if raters is None else Raters(**{
                               **raters, "correlation": tuple(raters.get(
                                   "correlation", (0.0, 0.0, 0.0)))})})
        except (KeyError, TypeError) as err:
            raise InputError(f"a crowd's fields are grid, spreads, weights, sigma, df, lapse, "
                             f"raters, scale, fitted_to, notes, name ({err})", path=source,
                             field="crowd") from None
        _check_model(model, source)
        return model


def _check_model(model: CrowdModel, source) -> None:
    try:
        weights = np.asarray(model.weights, float)
    except ValueError:
        raise InputError("weights must be one row per grid point, one column per spread",
                         path=source, field="weights") from None
    checks = [("weights", weights.shape == (len(model.grid), len(model.spreads))
               and bool(np.all(weights >= 0)) and weights.sum() > 0),
              ("sigma", model.sigma > 0),
              ("df", model.df is None or model.df > 0), ("lapse", 0 <= model.lapse < 1),
              ("scale", len(model.scale) == 3 and model.scale[0] < model.scale[1]
               and model.scale[2] > 0)]
    for name, ok in checks:
        if not ok:
            raise InputError(f"invalid value of {name}", path=source, field=name)


def read_model(path: str | Path) -> CrowdModel:
    """A crowd from its JSON file."""
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", path=path)
    return CrowdModel.from_json(path.read_text(encoding="utf-8"), source=path)


def default_model() -> CrowdModel:
    """The crowd fitted to the shipped logs (``lexgold/crowd/data/default.json``)."""
    from importlib import resources

    text = (resources.files("lexgold.crowd") / "data" / "default.json").read_text("utf-8")
    return CrowdModel.from_json(text, source="lexgold/crowd/data/default.json")


def rescale_crowd(model: CrowdModel, low: float, high: float, step: float = 1.0) -> CrowdModel:
    """The same crowd answering on ``low..high`` (step ``step``): every figure of the model is
    relative to the scale, so only the declared scale changes (a latent SD of 0.3 of the
    range is 1.8 points on 0-6 and 3 on 0-10)."""
    if not (low < high and step > 0):
        raise InputError(f"expected LOW < HIGH and a positive step, found {low:g} {high:g} "
                         f"{step:g}", field="scale")
    return replace(model, scale=(float(low), float(high), float(step)))


# -- the log -------------------------------------------------------------------------------------

@dataclass
class CodedLog:
    """A long-format log coded for the model: pair and rater index and code of each rating."""

    pair: np.ndarray          # pair index of each rating
    rater: np.ndarray         # rater index (0 = anonymous, 1..R identified)
    code: np.ndarray          # 2k on step k, 2k + 1 between steps k and k + 1
    pairs: pd.DataFrame       # word1, word2 of each pair index
    rater_ids: list           # ids of raters 1..R
    scale: tuple              # (low, high, step)

    @property
    def n_categories(self) -> int:
        low, high, step = self.scale
        return int(round((high - low) / step)) + 1


def anonymous_ids(ids: pd.Series) -> np.ndarray:
    """Which rater ids stand for no identity (empty, missing or starting with ``?``)."""
    text = ids.astype("string").fillna("").str.strip()
    return (text == "").to_numpy() | text.str.startswith(ANONYMOUS).fillna(False).to_numpy()


def code_log(ratings: pd.DataFrame, *, scale: tuple | None = None, step: float = 1.0,
             source: str | Path | None = None) -> CodedLog:
    """Code a long-format frame (``rater_id, word1, word2, rating``; checkpoint rows dropped)
    for the model. ``scale`` ``(low, high)`` defaults to the frame's ``scale_min, scale_max``
    columns, else the whole numbers around its ratings."""
    for column in ("rater_id", "word1", "word2", "rating"):
        if column not in ratings.columns:
            raise InputError(f"missing column {column!r}", path=source, field=column)
    frame = ratings
    if "kind" in frame.columns:
        frame = frame[frame["kind"].astype(str) != "checkpoint"]
    values = pd.to_numeric(frame["rating"], errors="coerce").to_numpy(float)
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(f"rating {frame['rating'].iloc[row]!r} of {frame['word1'].iloc[row]}"
                         f" / {frame['word2'].iloc[row]} is not a number", path=source,
                         field="rating")
    if len(values) == 0:
        raise InputError("no ratings", path=source, field="rating")
    if scale is None and {"scale_min", "scale_max"} <= set(frame.columns):
        lows = pd.to_numeric(frame["scale_min"], errors="coerce").dropna().unique()
        highs = pd.to_numeric(frame["scale_max"], errors="coerce").dropna().unique()
        if len(lows) == 1 and len(highs) == 1:
            scale = (float(lows[0]), float(highs[0]))
    if scale is None:
        scale = (math.floor(values.min()), math.ceil(values.max()))
    low, high = float(scale[0]), float(scale[1])
    if not low < high:
        raise InputError(f"the scale must span more than one value, found {low:g}-{high:g} "
                         "(give --scale LOW HIGH)", path=source, field="scale")
    scale_points(low, high, step, source=source)
    outside = (values < low - 1e-9) | (values > high + 1e-9)
    if outside.any():
        row = int(np.flatnonzero(outside)[0])
        raise InputError(f"rating {values[row]:g} of {frame['word1'].iloc[row]} / "
                         f"{frame['word2'].iloc[row]} is outside the scale {low:g}-{high:g}",
                         path=source, field="rating")
    steps = (values - low) / step
    nearest = np.round(steps)
    on_step = np.abs(steps - nearest) < 1e-6
    code = np.where(on_step, 2 * nearest, 2 * np.floor(steps) + 1)
    keys = frame[["word1", "word2"]].astype(str)
    pair = keys.groupby(["word1", "word2"], sort=False).ngroup().to_numpy()
    pairs = keys.drop_duplicates().reset_index(drop=True)
    anonymous = anonymous_ids(frame["rater_id"])
    named = frame["rater_id"].astype(str).to_numpy()
    rater_ids = list(pd.unique(named[~anonymous]))
    rater = np.where(anonymous, 0, pd.Index(rater_ids).get_indexer(named) + 1)
    return CodedLog(pair, rater, code.astype(int), pairs, rater_ids, (low, high, float(step)))


# -- likelihood ----------------------------------------------------------------------------------

def _bounds(n_categories: int, step_rel: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lower and upper latent bounds (relative units) and width in steps of each code."""
    codes = np.arange(2 * n_categories - 1)
    lower, upper = codes // 2, (codes + 1) // 2
    lo = np.where(lower == 0, -np.inf, (lower - 0.5) * step_rel)
    hi = np.where(upper == n_categories - 1, np.inf, (upper + 0.5) * step_rel)
    return lo, hi, (upper - lower + 1).astype(float)


_TABLE_Z = np.linspace(-60.0, 60.0, 24001)
_TABLES: dict = {}


def _cdf(z: np.ndarray, df: float | None, many: bool | None = None) -> np.ndarray:
    """Normal or Student-t CDF; the t's from a table of scipy's ``stdtr`` (step 0.005,
    interpolated: error below 1e-6) when many points share one ``df`` (``many``: by default
    when ``z`` has more points than the table)."""
    if df is None:
        return special.ndtr(z)
    if not (z.size >= _TABLE_Z.size if many is None else many) and df not in _TABLES:
        return special.stdtr(df, z)
    if df not in _TABLES:
        if len(_TABLES) > 8:
            _TABLES.clear()
        _TABLES[df] = special.stdtr(df, _TABLE_Z)
    table = _TABLES[df]         # the same operations as a plain expression, done in place
    place = np.clip(z, _TABLE_Z[0], _TABLE_Z[-1])
    place -= _TABLE_Z[0]
    place /= _TABLE_Z[1] - _TABLE_Z[0]
    index = np.minimum(place.astype(np.intp), _TABLE_Z.size - 2)
    place -= index                                        # the part of the step
    low = table[index]
    low *= 1 - place
    index += 1
    high = table[index]
    high *= place
    low += high
    return low


def rater_means(t, bias, scale):
    """A rater's mean latent response (relative units) to pairs of latent score ``t``: inside
    the scale (``0 < t < 1``) its ``bias`` and ``scale`` act on the logit of ``t``,
    ``expit(scale * logit(t) + 4 * bias)`` (``bias`` is its shift at the middle, where the
    logit's slope is 4), so raters part most in the middle and agree at the ends, the
    labelled anchors every rater shares; beyond the ends (``t <= 0``, ``t >= 1``) ``t`` itself,
    so a pair beyond an end is that end for every rater. Continuous and increasing in ``t``;
    ``bias = 0, scale = 1`` gives ``t``. Bounded scores in logit space: Smithson & Verkuilen
    (2006), *Psychological Methods* 11(1). Real raters' deviations near a scale's ends are a
    third to a half of what their mid-scale bias and scale predict (docs/process.md, "The
    lower tail"). Arguments broadcast."""
    t = np.asarray(t, float)
    inside = (t > 0) & (t < 1)
    z = np.asarray(scale, float) * special.logit(np.clip(t, 1e-12, 1 - 1e-12)) \
        + 4 * np.asarray(bias, float)
    return np.where(inside, special.expit(z), t)


def code_probabilities(n_categories: int, step_rel: float, mu, sd, df, lapse) -> np.ndarray:
    """P(code | latent mean ``mu``, scale ``sd``): codes on the last axis; ``mu`` and ``sd``
    broadcast (relative units)."""
    lo, hi, width = _bounds(n_categories, step_rel)
    mu, sd = np.asarray(mu, float)[..., None], np.asarray(sd, float)[..., None]
    p = _cdf((hi - mu) / sd, df) - _cdf((lo - mu) / sd, df)
    return (1 - lapse) * p + lapse * width / n_categories


def rating_probabilities(model: CrowdModel, score: float, *, bias: float = 0.0,
                         scale: float = 1.0, noise: float = 1.0, spread: float = 1.0):
    """``{rating: probability}`` of one (pair, rater) cell on the model's scale, for a pair of
    latent ``score`` (scale units) and a rater of ``bias`` (scale units), scale and noise
    multipliers; a pair's ``spread`` multiplier."""
    low, high, step = model.scale
    width = high - low
    k = int(round(width / step)) + 1
    mu = rater_means((score - low) / width, bias / width, scale)
    p = code_probabilities(k, step / width, mu, model.sigma * spread * noise, model.df,
                           model.lapse)[0::2]
    return {low + i * step: float(v) for i, v in enumerate(p)}


class _Fit:
    """State of one EM fit of a coded log."""

    def __init__(self, log: CodedLog, identity: bool, mix: Raters | None = None):
        self.mix = mix if mix is not None and not identity else None
        low, high, step = log.scale
        self.k = log.n_categories
        self.h = step / (high - low)
        self.q = 2 * self.k - 1
        self.n = int(log.pair.max()) + 1
        self.g = len(log.rater_ids) + 1 if identity else 1
        rater = log.rater if identity else np.zeros_like(log.rater)
        self.rater = rater
        cell = rater * self.q + log.code
        cells = sparse.csr_matrix((np.ones(len(cell)), (log.pair, cell)),
                                  shape=(self.n, self.g * self.q))
        if self.g == 1:         # pairs of identical ratings share a row (SimVerb: 1,857 rows)
            _, first, self.row, self.mult = np.unique(
                cells.toarray(), axis=0, return_index=True, return_inverse=True,
                return_counts=True)
            self.row = self.row.ravel()
            self.cells = cells[first]
        else:
            self.row, self.mult, self.cells = np.arange(self.n), np.ones(self.n), cells
        self.mult = self.mult.astype(float)
        self.filled = np.unique(self.cells.indices)       # the (group, code) cells rated
        self.identity = identity and self.g > 1
        self.bias = np.zeros(self.g)
        self.log_scale = np.zeros(self.g)
        self.log_noise = np.zeros(self.g)
        self.spam = np.zeros(self.g)               # P(spammer) of each rater (0: anonymous)
        self.ratings_of = np.bincount(rater, minlength=self.g)
        values = log.code / 2 * self.h
        means = np.bincount(log.pair, values, self.n) / np.bincount(log.pair, minlength=self.n)
        self.sigma = float(np.sqrt(np.mean((values - means[log.pair]) ** 2))) or 0.1
        prior = np.where((GRID >= 0) & (GRID <= 1), 1.0, 0.0)[:, None] \
            * np.exp(-SPREADS ** 2 / (2 * 0.3 ** 2))[None, :]
        self.weights = (prior / prior.sum()).ravel()
        self.lapse, self.df = 0.02, 10.0
        self.rated: _Rated | None = None          # made when first needed (_rated)
        self.columns: sparse.csc_matrix | None = None     # cells by column (_cells_pass)

    def log_probs(self, lapse, df, groups=None) -> np.ndarray:
        """log P(code | grid point, spread) per group: ``[G, Q, T, M]``; an anonymous
        rating (group 0) of a log fitted with given rater spreads averages over raters."""
        groups = np.arange(self.g) if groups is None else groups
        scale, bias = np.exp(self.log_scale[groups]), self.bias[groups]
        mu = rater_means(GRID[None, :], bias[:, None], scale[:, None])           # [G, T]
        sd = self.sigma * np.exp(SPREADS)[None, :] * np.exp(self.log_noise[groups])[:, None]
        p = code_probabilities(self.k, self.h, mu[:, :, None], sd[:, None, :], df, lapse)
        if self.mix is not None and groups[0] == 0:
            p[0] = self.mixed(lapse, df)
        return np.log(np.maximum(np.moveaxis(p, -1, 1), 1e-300))                 # [G,Q,T,M]

    def mixed(self, lapse, df) -> np.ndarray:
        """P(code | grid point, spread) of a rater drawn from the held rater spreads
        (Gauss-Hermite quadrature: 5 biases x 3 scales x 3 noises): ``[T, M, Q]``."""
        b, wb = np.polynomial.hermite_e.hermegauss(5)
        c, wc = np.polynomial.hermite_e.hermegauss(3)
        z = np.stack([v.ravel() for v in np.meshgrid(b, c, c, indexing="ij")])   # [3, 45]
        weight = (wb[:, None, None] * wc[None, :, None] * wc[None, None, :]).ravel()
        weight /= weight.sum()
        bias, log_scale, log_noise = self.mix.cholesky() @ z      # correlated raters
        mu = rater_means(GRID[None, :], bias[:, None], np.exp(log_scale)[:, None])
        sd = self.sigma * np.exp(SPREADS)[None, :] * np.exp(log_noise)[:, None]
        p = code_probabilities(self.k, self.h, mu[:, :, None], sd[:, None, :], df, lapse)
        return np.tensordot(weight, p, axes=(0, 0))

    def cell_logp(self, lapse, df, cells: np.ndarray, columns: np.ndarray | None = None
                  ) -> np.ndarray:
        """log P(code | grid point, spread) of the (group, code) ``cells`` (``group * Q +
        code``): ``[cells, T * M]``, the rows of :meth:`log_probs` (the same numbers) for the
        cells a log fills only: a rater of one rating fills one of its Q; with ``columns``
        (indices of (grid point, spread) cells), those columns only: ``[cells, columns]``."""
        if self.mix is not None:
            logp = self.log_probs(lapse, df).reshape(self.g * self.q, -1)[cells]
            return logp if columns is None else logp[:, columns]
        zl, zh = self.cell_z(cells, columns)
        many = self.g * self.q * len(GRID) * len(SPREADS) >= _TABLE_Z.size     # as log_probs
        p = _cdf(zh, df, many) - _cdf(zl, df, many)
        width = _bounds(self.k, self.h)[2][cells % self.q]
        p = (1 - lapse) * p + lapse * width[:, None] / self.k
        return np.log(np.maximum(p, 1e-300))

    def cell_z(self, cells: np.ndarray, columns: np.ndarray | None = None):
        """The standardised latent bounds ``(zl, zh)`` of the (group, code) ``cells`` at each
        (grid point, spread) cell, or at ``columns`` only: ``[cells, T * M]`` (or ``[cells,
        columns]``) each, at the current raters and ``sigma`` (``sigma`` divides them)."""
        groups, codes = cells // self.q, cells % self.q
        lo, hi, _ = _bounds(self.k, self.h)
        mu = rater_means(GRID[None, :], self.bias[groups][:, None],
                         np.exp(self.log_scale[groups])[:, None])                # [C, T]
        sd = self.sigma * np.exp(SPREADS)[None, :] \
            * np.exp(self.log_noise[groups])[:, None]                            # [C, M]
        if columns is None:
            mu, sd = mu[:, :, None], sd[:, None, :]
            return (((lo[codes][:, None, None] - mu) / sd).reshape(len(cells), -1),
                    ((hi[codes][:, None, None] - mu) / sd).reshape(len(cells), -1))
        mu, sd = mu[:, columns // len(SPREADS)], sd[:, columns % len(SPREADS)]
        return (lo[codes][:, None] - mu) / sd, (hi[codes][:, None] - mu) / sd

    def cell_blocks(self):
        """The filled cells (:attr:`filled`) in blocks of at most :data:`CELL_BLOCK`, whose
        probabilities on the grid are held at once."""
        return [self.filled[at:at + CELL_BLOCK] for at in range(0, len(self.filled),
                                                                 CELL_BLOCK)]

    def pair_loglik(self, lapse, df) -> np.ndarray:
        """log P(ratings of a row | grid point, spread): ``[rows, T * M]``, a spammer-likely
        rater's ratings weighted down."""
        honest = np.repeat(1 - self.spam, self.q)
        weighted = self.cells.multiply(honest[None, :]).tocsc()
        total = None
        for cells in self.cell_blocks():
            part = weighted[:, cells].tocsr() @ self.cell_logp(lapse, df, cells)
            if total is None:
                total = part
            else:
                total += part
        return total

    def npmle(self, loglik, iterations: int) -> float:
        """EM steps of the grid weights (closed form: the mean posterior; Laird 1978) with the
        likelihoods held; returns the log-likelihood."""
        top = loglik.max(axis=1)
        like = np.exp(loglik - top[:, None])
        total = self.mult.sum()
        for _ in range(iterations):
            fitted = like @ self.weights
            self.weights = self.weights * (like.T @ (self.mult / fitted)) / total
        return float(self.mult @ (np.log(like @ self.weights) + top))

    def posterior(self, loglik) -> np.ndarray:
        """Each row's posterior over (grid point, spread)."""
        joint = loglik + np.log(np.maximum(self.weights, 1e-300))[None, :]
        joint -= joint.max(axis=1, keepdims=True)
        np.exp(joint, out=joint)
        joint /= joint.sum(axis=1, keepdims=True)
        return joint

    def marginal(self, x) -> float:
        lapse, df = self.unpack(x)
        return -self.npmle(self.pair_loglik(lapse, df), 0)

    def pack(self):
        return np.array([special.logit(self.lapse)]
                        + ([] if self.df is None else [math.log(self.df)]))

    def unpack(self, x):
        return float(special.expit(x[0])), (None if len(x) == 1 else float(np.exp(x[1])))


def fit(ratings: pd.DataFrame, *, scale: tuple | None = None, step: float = 1.0,
        error: str = "t", source: str | Path | None = None, progress=None,
        raters: Raters | None = None, max_iterations: int = 40,
        tolerance: float = 1e-6) -> CrowdModel:
    """Fit the model (module docstring) to a long-format log by maximum likelihood.

    Parameters
    ----------
    ratings : pandas.DataFrame
        ``rater_id, word1, word2, rating`` (checkpoint rows dropped); raters with ids empty or
        starting with ``?`` are anonymous.
    scale, step : the declared scale ``(low, high)`` and its step (see :func:`code_log`).
    error : ``"t"`` (Student-t latent error, df fitted) or ``"normal"``.
    progress : callable, optional
        Called with the iteration number after each EM iteration.
    raters : Raters, optional
        For a log without rater identity: how raters differ, held (learnt from a log with
        identity); each anonymous rating is then a fresh rater's, the likelihood averaged over
        raters, and ``sigma`` is the noise within a rater.

    Returns
    -------
    CrowdModel
        With ``raters`` None when fewer than three raters have identity and none were given.
    """
    if error not in ("t", "normal"):
        raise InputError(f"expected 't' or 'normal', found {error!r}", field="error")
    from threadpoolctl import threadpool_limits

    log = code_log(ratings, scale=scale, step=step, source=source)
    if np.bincount(log.pair).max() < 2:
        raters = len(log.rater_ids)
        raise InputError(f"every pair has one rating ({len(log.pair)} pairs, "
                         f"{raters} identified rater{'s' if raters != 1 else ''}): the model's "
                         "noise is the spread of a pair's ratings, so a crowd is fitted to pairs "
                         "rated two or more times", path=source, field="rating")
    with threadpool_limits(limits=1):     # small matrices: BLAS threads only cost here
        return _fit(log, error, progress, raters, max_iterations, tolerance)


def _fit(log: CodedLog, error: str, progress, raters, max_iterations: int,
         tolerance: float) -> CrowdModel:
    identity = len(log.rater_ids) >= 3
    state = _Fit(log, identity, raters)
    if error == "normal":
        state.df = None
    previous = -np.inf
    bounds = [tuple(special.logit(v) for v in LAPSE_BOUNDS)] + \
        ([] if state.df is None else [tuple(math.log(v) for v in DF_BOUNDS)])
    if state.identity and state.g - 1 > ONE_BY_ONE:
        return _fit_at_once(state, log, progress, max_iterations, tolerance)
    for iteration in range(1, max_iterations + 1):
        loglik = state.pair_loglik(state.lapse, state.df)
        total = state.npmle(loglik, 100 if iteration == 1 else 30)
        if state.identity:
            _raters_step(state, state.posterior(loglik), log)
        result = optimize.minimize(state.marginal, state.pack(), method="L-BFGS-B",
                                   bounds=bounds, options={"maxiter": 5})
        state.lapse, state.df = state.unpack(result.x)
        total = -result.fun
        if progress is not None:
            progress(iteration)
        if abs(total - previous) < tolerance * max(1.0, abs(total)) and iteration > 3:
            break
        previous = total
    model = _model(state, log, total, iteration)
    if state.mix is not None:
        model = replace(model, raters=raters, notes=model.notes + [
            "rater spreads held, not fitted: each rating a fresh rater's"])
    return model


def _fit_at_once(state: _Fit, log: CodedLog, progress, max_iterations: int,
                 tolerance: float) -> CrowdModel:
    """EM beyond :data:`ONE_BY_ONE` raters: each iteration one pass over the filled cells
    (:func:`_cells_pass`: the spammer step, then the pairs' likelihoods), the grid weights
    (:meth:`_Fit.npmle`), the raters at once and centred within their bounds
    (:func:`_rater_update`), ``lapse`` and ``df`` (:func:`_lapse_df_step`). Its objective is
    the variational bound (:func:`_spammer_terms`: the pairs' log-likelihood, their ratings
    weighted by honesty, plus the spammers' part), which every step of EM raises (the
    centring of biases and log scales, the model's constraint, can lower it a little); it
    stops when a plain iteration gains less than ``tolerance`` of it (or loses: the
    centring's noise is then above the gain). Accelerated by SQUAREM (Varadhan & Roland
    2008, scheme S3) on the raters' parameters, ``log sigma``, ``logit lapse`` and ``log
    df``: after three plain iterations the point is extrapolated along their steps, kept only
    if the bound rises there, else the last plain point is restored; a fixed point of EM is a
    fixed point of the scheme, so the maximum is EM's."""
    post, previous, trail, jumped = None, -np.inf, [], None
    for iteration in range(1, max_iterations + 1):
        loglik = _cells_pass(state, post, log)
        total = state.npmle(loglik, 100 if iteration == 1 else 30)
        bound = total + _spammer_terms(state)
        if jumped is not None and bound < previous:        # back to the last plain point
            _set_point(state, jumped)
            loglik = _cells_pass(state, post, log)
            total = state.npmle(loglik, 30)
            bound = total + _spammer_terms(state)
        plain, jumped = jumped is None, None
        if progress is not None:
            progress(iteration)
        if plain and bound - previous < tolerance * max(1.0, abs(bound)) and iteration > 3:
            break
        previous = bound
        post = state.posterior(loglik)
        _lapse_df_step(state, _rater_update(state, post))
        trail = (trail + [_point(state)])[-3:]
        if len(trail) == 3:
            jumped = _point(state)
            _set_point(state, _extrapolated(*trail), keep=True)
            trail = []
    model = _model(state, log, total, iteration)
    return replace(model, notes=[model.notes[0] + f" (variational bound, the spammers' part "
                                 f"included: {bound:.2f})"] + model.notes[1:])


def _spammer_terms(state: _Fit) -> float:
    """The spammers' part of the fit's variational bound (mean field over each rater's
    spammer indicator, ``pi_j = P(spammer)``, the pairs' posteriors given the rest: the
    pairs' log-likelihood with ratings weighted by ``1 - pi_j`` is the other part):
    ``sum_j pi_j U_j + pi_j log rho + (1 - pi_j) log(1 - rho) + H(pi_j)``, ``U_j`` the
    log-probability of rater ``j``'s ratings under a spammer, ``rho`` the spammers' share
    (their mean, as the spammer step's prior)."""
    if state.rated is None:
        return 0.0
    pi = np.clip(state.spam[1:], 1e-300, 1.0)
    rest = np.clip(1 - state.spam[1:], 1e-300, 1.0)
    rho = float(np.clip(np.mean(state.spam[1:]), 1e-3, 0.5))
    uniform = np.bincount(state.rated.rater, state.rated.uniform, state.g)[1:]
    return float(pi @ uniform + (pi * math.log(rho) + rest * math.log(1 - rho)).sum()
                 - (pi * np.log(pi) + rest * np.log(rest)).sum())


def _point(state: _Fit) -> tuple:
    """The parameters SQUAREM extrapolates (as a vector: the raters' bias, log scale and
    log noise, ``log sigma``, ``logit lapse``, ``log df``) and what it does not (the grid
    weights, the spammer posteriors), to restore."""
    vector = np.concatenate([state.bias[1:], state.log_scale[1:], state.log_noise[1:],
                             [math.log(state.sigma), special.logit(state.lapse)]
                             + ([] if state.df is None else [math.log(state.df)])])
    return vector, state.weights.copy(), state.spam.copy()


def _set_point(state: _Fit, point: tuple, *, keep: bool = False) -> None:
    """Put ``point`` (:func:`_point`) into ``state``: all of it, or with ``keep`` its vector
    only, each parameter kept within its bounds."""
    vector, weights, spam = point
    n = state.g - 1
    for i, (name, (low, high)) in enumerate(zip(("bias", "log_scale", "log_noise"),
                                                RATER_BOUNDS)):
        getattr(state, name)[1:] = np.clip(vector[i * n:(i + 1) * n], low, high)
    state.sigma = float(math.exp(vector[3 * n]))
    state.lapse = float(np.clip(special.expit(vector[3 * n + 1]), *LAPSE_BOUNDS))
    if state.df is not None:
        state.df = float(np.clip(math.exp(vector[3 * n + 2]), *DF_BOUNDS))
    if not keep:
        state.weights, state.spam = weights.copy(), spam.copy()


def _extrapolated(first: tuple, second: tuple, third: tuple) -> tuple:
    """SQUAREM's S3 point from three successive EM points: ``r = x1 - x0``, ``v = x2 - 2 x1
    + x0``, ``alpha = -|r| / |v|`` (at most -1), ``x0 - 2 alpha r + alpha^2 v``; the last
    point's weights and spammer posteriors."""
    x0, x1, x2 = first[0], second[0], third[0]
    r, v = x1 - x0, x2 - 2 * x1 + x0
    norm_v = float(np.sqrt(v @ v))
    alpha = min(-1.0, -float(np.sqrt(r @ r)) / norm_v) if norm_v > 0 else -1.0
    return x0 - 2 * alpha * r + alpha ** 2 * v, third[1], third[2]


#: bounds of a rater's bias, log scale and log noise (relative units)
RATER_BOUNDS = ((-0.6, 0.6), (-1.5, 1.5), (-2.0, 2.0))
#: raters fitted one at a time (scipy's L-BFGS-B) up to this many; more at once
#: (:func:`_raters_at_once`), where one optimiser call per rater would cost minutes a round
ONE_BY_ONE = 64
#: (group, code) cells whose probabilities on the grid are held at once (675 floats each)
CELL_BLOCK = 4096
#: ratings whose probabilities on the grid are held at once (675 floats each)
RATING_BLOCK = 8192
#: (rater, code, grid point, spread) terms of the rater step computed at once (64 K: each
#: temporary 512 KB, near the cache; 1 M took 1.5x the CPU on the 1,000-rater log)
ENTRY_BLOCK = 1 << 16


def _raters_step(state: _Fit, post: np.ndarray, log: CodedLog) -> _Entries | None:
    """Each rater's bias, scale and noise (expected log-likelihood), then the spammer
    posteriors; biases, log scales and log noises centred on the honest raters. Returns the
    E-step's expected counts where the raters were fitted at once (:func:`_raters_at_once`),
    else None."""
    entries = _rater_update(state, post)
    # spammer posterior: uniform answers against the leave-one-out predictive probability,
    # by blocks of raters and of their ratings (never a [ratings, T * M] array); with raters
    # at once, over each pair's posterior's nonzero terms only (a pair of many ratings has
    # its posterior on a few grid cells, the rest exactly 0)
    support = None if entries is None else sparse.csr_matrix(post)
    rated = _rated(state, log)
    predictive = np.empty(len(rated.cell))
    for cells in state.cell_blocks():
        _predictive(rated, post, support, cells,
                    state.cell_logp(state.lapse, state.df, cells), predictive)
    state.spam[1:] = _spam_posteriors(state, rated, predictive, slice(None),
                                      float(np.mean(state.spam[1:])))[1:]
    return entries


def _rater_update(state: _Fit, post: np.ndarray) -> _Entries | None:
    """The raters' M-step (:func:`_rater_parameters`) under the pairs' posteriors ``post``,
    biases, log scales and log noises then centred on the honest raters within their bounds
    (:func:`_centring_shift`; the noises' shift moved into ``sigma``). Returns
    :func:`_rater_parameters`' expected counts."""
    weighted = post if bool((state.mult == 1).all()) else post * state.mult[:, None]
    entries = _rater_parameters(state, state.cells.T.tocsr(), weighted)
    honest = 1 - state.spam[1:]
    for name, (low, high) in zip(("bias", "log_scale", "log_noise"), RATER_BOUNDS):
        values = getattr(state, name)
        shift = _centring_shift(values[1:], honest, low, high)
        values[1:] = np.clip(values[1:] - shift, low, high)
        if name == "log_noise":
            state.sigma *= math.exp(shift)
    return entries


def _centring_shift(values: np.ndarray, weights: np.ndarray, low: float, high: float) -> float:
    """The shift ``c`` that centres ``values`` within their bounds: the weighted mean of
    ``clip(values - c, low, high)`` is 0. It is the weighted mean itself unless a value would
    cross a bound; then a rater at a bound stays there and the others take the shift
    (Brent's root of the clipped mean, which falls with ``c``). A plain shift would move a
    rater at a bound beyond it each iteration, where the Newton steps, kept within the
    bounds, could not bring it back: its parameter would drift with the fit's length."""
    shift = float(np.average(values, weights=weights))
    if values.min() - shift >= low and values.max() - shift <= high:
        return shift
    return optimize.brentq(lambda c: float(np.average(np.clip(values - c, low, high),
                                                      weights=weights)),
                           float(values.min()) - high, float(values.max()) - low, xtol=1e-12)


@dataclass
class _Rated:
    """The identified ratings of a fit: each one's (rater, code) ``cell``, its pair's
    ``row``, ``rater`` and log-probability under a spammer (``uniform``); ``order`` sorts
    them by cell (``sorted_cell``)."""

    cell: np.ndarray
    row: np.ndarray
    rater: np.ndarray
    uniform: np.ndarray
    order: np.ndarray
    sorted_cell: np.ndarray


def _rated(state: _Fit, log: CodedLog) -> _Rated:
    """The fit's identified ratings (:class:`_Rated`), made once (the log does not change)."""
    if state.rated is None:
        rated = state.rater > 0
        cell = state.rater[rated] * state.q + log.code[rated]
        order = np.argsort(cell, kind="stable")
        width = _bounds(state.k, state.h)[2][log.code[rated]]
        state.rated = _Rated(cell, state.row[log.pair[rated]], state.rater[rated],
                             np.log(width / state.k), order, cell[order])
    return state.rated


def _predictive(rated: _Rated, post, support, cells, logp, out) -> slice:
    """The leave-one-out predictive log-probability of each identified rating in ``cells``
    (their grid log-probabilities ``logp``) into ``out``: ``-log sum_z post(z) / P(rating |
    z)`` over its pair's posterior ``post`` (over its nonzero terms ``support`` where given),
    by blocks of :data:`RATING_BLOCK` ratings (never a ``[ratings, T * M]`` array). Returns
    the slice of ``rated.order`` these ratings are."""
    inverse_p = np.exp(-logp)
    start, stop = np.searchsorted(rated.sorted_cell, [cells[0], cells[-1] + 1])
    for at in range(start, stop, RATING_BLOCK):
        some = rated.order[at:min(at + RATING_BLOCK, stop)]
        local = np.searchsorted(cells, rated.cell[some])
        if support is None:
            inverse = (post[rated.row[some]] * inverse_p[local]).sum(axis=1)
        else:
            inverse = _posterior_means(support, rated.row[some], inverse_p, local)
        out[some] = -np.log(inverse)
    return slice(start, stop)


def _spam_posteriors(state: _Fit, rated: _Rated, predictive: np.ndarray, which,
                     share: float) -> np.ndarray:
    """Each group's spammer posterior (``[G]``) from the identified ratings ``which`` (an
    index of them; a rater's ratings all in or all out): their uniform probabilities
    against their leave-one-out ``predictive`` log-probabilities, the prior odds those of
    ``share`` (the spammers' current share, clipped to 0.001-0.5)."""
    share = float(np.clip(share, 1e-3, 0.5))
    return special.expit(np.bincount(rated.rater[which], rated.uniform[which]
                                     - predictive[which], state.g)
                         + math.log(share / (1 - share)))


def _rater_blocks(state: _Fit) -> list[np.ndarray]:
    """The filled cells in blocks of whole raters (a rater's cells never split), each of at
    most :data:`CELL_BLOCK` cells or else one rater's."""
    starts = np.flatnonzero(np.r_[True, np.diff(state.filled // state.q) != 0])
    ends = np.r_[starts[1:], len(state.filled)]
    blocks, at = [], 0
    while at < len(state.filled):
        fits = ends[(ends > at) & (ends <= at + CELL_BLOCK)]
        end = int(fits[-1]) if len(fits) else int(ends[ends > at][0])
        blocks.append(state.filled[at:end])
        at = end
    return blocks


def _cells_pass(state: _Fit, post: np.ndarray | None, log: CodedLog) -> np.ndarray:
    """One pass over the filled cells' grid probabilities shared by the spammer step and the
    pairs' likelihoods (raters at once, beyond :data:`ONE_BY_ONE`): for each block of whole
    raters (:func:`_rater_blocks`), their spammer posteriors from the previous E-step's
    posteriors ``post`` (None: kept) and these probabilities, at the parameters the previous
    M-step left (:func:`_predictive`, :func:`_spam_posteriors`), then the block's part of
    :meth:`_Fit.pair_loglik`, weighted by the new honesty. Only at the (grid point, spread)
    cells of positive weight or posterior (the start gives 315 of the 675 weight, and EM's
    weights that underflow to 0 stay 0; 0 contributes nothing to the grid weights' step, the
    likelihood or, through the posteriors, the spammer and rater steps); the others' columns
    of the returned likelihoods are ``-inf``."""
    if state.columns is None:
        state.columns = state.cells.tocsc()
    share = float(np.mean(state.spam[1:]))
    active = state.weights > 0
    if post is not None:
        active |= post.max(axis=0) > 0
    active = np.flatnonzero(active)
    if post is not None:
        support = sparse.csr_matrix(_significant(post[:, active], state.lapse, state.k))
        rated = _rated(state, log)
        predictive = np.empty(len(rated.cell))
    total = None
    for cells in _rater_blocks(state):
        logp = state.cell_logp(state.lapse, state.df, cells, active)
        if post is not None:
            done = _predictive(rated, post, support, cells, logp, predictive)
            groups = np.unique(cells // state.q)
            groups = groups[groups > 0]                 # the anonymous are no spammers
            state.spam[groups] = _spam_posteriors(state, rated, predictive,
                                                  rated.order[done], share)[groups]
        block = state.columns[:, cells]
        block = block.multiply((1 - state.spam)[cells // state.q][None, :]).tocsr()
        part = block @ logp
        if total is None:
            total = part
        else:
            total += part
    loglik = np.full((state.cells.shape[0], len(GRID) * len(SPREADS)), -np.inf)
    loglik[:, active] = total
    return loglik


def _significant(post: np.ndarray, lapse: float, k: int) -> np.ndarray:
    """The posteriors ``post`` (``[rows, cells]``) with each row's terms too small to count
    in a leave-one-out predictive sum (:func:`_predictive`) set to 0: those below ``eps lapse
    / (k cells)`` of the row's largest. A rating's probability is at least ``lapse / k`` (a
    lapse's share of its code), so the dropped terms sum to under ``eps`` (double
    precision's) of the largest term, below the sum's own rounding; a row keeps about 5 of
    its 45 nonzero terms on the 10,000-rater log."""
    floor = np.finfo(float).eps * lapse / (k * post.shape[1]) * post.max(axis=1, keepdims=True)
    return np.where(post >= floor, post, 0.0)


def _posterior_means(support: sparse.csr_matrix, rows: np.ndarray, values: np.ndarray,
                     local: np.ndarray) -> np.ndarray:
    """``sum_z support[rows[r], z] * values[local[r], z]`` for each ``r``: row ``rows[r]`` of
    the sparse posteriors ``support`` against row ``local[r]`` of ``values``, over the
    posterior's nonzero terms."""
    counts = np.diff(support.indptr)[rows]
    ends = np.cumsum(counts)
    at = np.repeat(support.indptr[rows] - (ends - counts), counts) + np.arange(ends[-1])
    which = np.repeat(np.arange(len(rows)), counts)
    terms = support.data[at] * values[local[which], support.indices[at]]
    return np.bincount(which, terms, len(rows))


def _rater_parameters(state: _Fit, expected_of, weighted: np.ndarray) -> _Entries | None:
    """Each rater's bias, log scale and log noise maximising its expected log-likelihood
    under the pairs' posteriors (``weighted``; ``expected_of`` maps them to the (rater, code)
    cells): one rater at a time by scipy's L-BFGS-B up to :data:`ONE_BY_ONE` raters, else all
    at once (:func:`_raters_at_once`, whose expected counts are returned; else None)."""
    if state.g - 1 > ONE_BY_ONE:
        return _raters_at_once(state, expected_of, weighted)
    for g in range(1, state.g):
        counts = expected_of[g * state.q:(g + 1) * state.q] @ weighted     # [Q, T * M]

        def loss(x, g=g, counts=counts):
            state.bias[g], state.log_scale[g], state.log_noise[g] = x
            logp = state.log_probs(state.lapse, state.df, groups=np.array([g]))[0]
            return -float((counts * logp.reshape(state.q, -1)).sum())

        start = np.array([state.bias[g], state.log_scale[g], state.log_noise[g]])
        result = optimize.minimize(loss, start, method="L-BFGS-B", bounds=RATER_BOUNDS,
                                   options={"maxiter": 10})
        state.bias[g], state.log_scale[g], state.log_noise[g] = result.x
    return None


def _density(z: np.ndarray, df: float | None) -> tuple[np.ndarray, np.ndarray]:
    """The error's density ``f`` and its derivative ``f'`` at ``z`` (normal or Student-t);
    both 0 at an open end (``z`` infinite)."""
    finite = np.isfinite(z)
    z = np.where(finite, z, 0.0)
    if df is None:
        f = np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
        slope = -z * f
    else:
        const = math.exp(special.gammaln((df + 1) / 2) - special.gammaln(df / 2)) \
            / math.sqrt(df * math.pi)
        f = const * np.exp(-(df + 1) / 2 * np.log1p(z * z / df))
        slope = -f * (df + 1) * z / (df + z * z)
    return np.where(finite, f, 0.0), np.where(finite, slope, 0.0)


@dataclass
class _Entries:
    """The expected counts of a fit's E-step by (group, code, grid cell): ``n[e]`` expected
    ratings of group ``g[e]`` with code ``q[e]`` from pairs at (grid point, spread) ``c[e]``
    (:func:`_expected_entries`). Every term of the expected complete-data log-likelihood the
    M-step maximises is one entry's ``n log P(q | c, group)``."""

    g: np.ndarray
    q: np.ndarray
    c: np.ndarray
    n: np.ndarray
    #: the error's CDF from its table (:func:`_cdf`), decided on the whole E-step's entries
    many: bool = False

    def blocks(self):
        """Slices of at most :data:`ENTRY_BLOCK` entries."""
        return [slice(at, at + ENTRY_BLOCK) for at in range(0, len(self.n), ENTRY_BLOCK)]

    def of(self, groups: np.ndarray) -> "_Entries":
        """The entries of the groups where ``groups`` (a mask) is true (these entries
        themselves where every entry's group is)."""
        if groups.all():
            return self
        keep = groups[self.g]
        if keep.all():
            return self
        return _Entries(self.g[keep], self.q[keep], self.c[keep], self.n[keep], self.many)


def _expected_entries(state: _Fit, expected_of, weighted: np.ndarray) -> _Entries:
    """The E-step's expected counts (posteriors ``weighted`` mapped to the filled (group,
    code) cells by ``expected_of``), the terms below 1e-10 of their group's ratings dropped
    (a pair's posterior sums to 1). Sparse products: a pair of many ratings has its posterior
    on a few grid cells, the rest exactly 0."""
    cell_g, cell_q, cell_c, cell_n = [], [], [], []
    floor = 1e-10 * state.ratings_of
    support = sparse.csr_matrix(weighted)
    for cells in state.cell_blocks():
        counts = (expected_of[cells] @ support).tocoo()              # [cells, T * M]
        keep = counts.data >= floor[cells[counts.row] // state.q]
        where = counts.row[keep], counts.col[keep]
        cell_g.append((cells[where[0]] // state.q).astype(np.int32))
        cell_q.append((cells[where[0]] % state.q).astype(np.int16))
        cell_c.append(where[1].astype(np.int16))
        cell_n.append(counts.data[keep])
    g, q, c, n = (np.concatenate(v) for v in (cell_g, cell_q, cell_c, cell_n))
    return _Entries(g, q, c, n, many=len(n) >= _TABLE_Z.size)


def _entry_terms(state: _Fit, x: np.ndarray, part: slice, entries: _Entries, df, *,
                 derivatives: bool = True):
    """For the entries ``part`` at rater parameters ``x`` (``[G, 3]``: bias, log scale, log
    noise): the latent bounds standardised (``zl``, ``zh``), the honest model's probability
    ``T`` of each entry's code, the rater mean's derivatives (:func:`_mean_derivatives`; None
    unless ``derivatives``) and ``sd``. The rater means are :func:`rater_means`' numbers, the
    logit of each grid point taken once (:data:`_GRID_LOGIT`) and shared with the
    derivatives."""
    zl, zh, sd, (ts, ell, mu) = _entry_bounds(state, x, part, entries)
    return (zl, zh, _cdf(zh, df, entries.many) - _cdf(zl, df, entries.many),
            _mean_derivatives(ts, mu, ell) if derivatives else None, sd)


def _entry_bounds(state: _Fit, x: np.ndarray, part: slice, entries: _Entries):
    """The standardised latent bounds ``zl``, ``zh`` and ``sd`` of the entries ``part`` at
    rater parameters ``x``, and ``(grid index, scale * logit(t), mu)`` of each: what does
    not depend on the error's ``df``."""
    lo, hi, _ = _bounds(state.k, state.h)
    gs, qs, cs = entries.g[part], entries.q[part], entries.c[part]
    ts = cs // len(SPREADS)
    ell = np.exp(x[gs, 1]) * _GRID_LOGIT[ts]
    mu = np.where(_GRID_INSIDE[ts], special.expit(ell + 4 * x[gs, 0]), GRID[ts])
    sd = state.sigma * np.exp(SPREADS[cs % len(SPREADS)] + x[gs, 2])
    return (lo[qs] - mu) / sd, (hi[qs] - mu) / sd, sd, (ts, ell, mu)


def _mean_derivatives(ts, mu, ell):
    """The first and second derivatives of :func:`rater_means` ``mu`` in (bias, log scale)
    at grid indices ``ts``: inside the scale, with ``u = scale logit(t) + 4 bias``,
    ``a = mu (1 - mu)`` and ``L = scale logit(t)`` (``ell``): ``mu_b = 4a``, ``mu_s = L a``,
    ``mu_bb = 16 a (1 - 2 mu)``, ``mu_bs = 4 L a (1 - 2 mu)``, ``mu_ss = L a (1 + L (1 -
    2 mu))``; beyond the ends all 0 (``mu = t``)."""
    a = np.where(_GRID_INSIDE[ts], mu * (1 - mu), 0.0)
    bend = 1 - 2 * mu
    return (4 * a, ell * a, 16 * a * bend, 4 * ell * a * bend, ell * a * (1 + ell * bend))


def _entry_losses(state: _Fit, x: np.ndarray, entries: _Entries, lapse, df) -> np.ndarray:
    """Each group's negative expected log-likelihood (the M-step's objective) at ``x``."""
    width = _bounds(state.k, state.h)[2]
    total = np.zeros(state.g)
    for part in entries.blocks():
        *_, honest_p, _, _ = _entry_terms(state, x, part, entries, df, derivatives=False)
        p = (1 - lapse) * honest_p + lapse * width[entries.q[part]] / state.k
        total += np.bincount(entries.g[part], entries.n[part] * np.log(np.maximum(p, 1e-300)),
                             state.g)
    return -total


def _entry_derivatives(state: _Fit, x: np.ndarray, entries: _Entries, lapse, df):
    """Each group's objective (:func:`_entry_losses`), its gradient ``[G, 3]`` and curvature
    ``[G, 3, 3]`` in (bias, log scale, log noise), analytically: with ``z = (bound - mu) /
    sd``, ``dz = (-mu_b/sd, -mu_s/sd, -z)`` (``mu``'s derivatives: :func:`_mean_derivatives`)
    and the error's density and its slope at each bound (:func:`_density`)."""
    width = _bounds(state.k, state.h)[2]
    loss, grad, curve = np.zeros(state.g), np.zeros((state.g, 3)), np.zeros((state.g, 3, 3))
    for part in entries.blocks():
        zl, zh, honest_p, (mu_b, mu_s, mu_bb, mu_bs, mu_ss), sd = _entry_terms(
            state, x, part, entries, df)
        gs, n = entries.g[part], entries.n[part]
        p = np.maximum((1 - lapse) * honest_p + lapse * width[entries.q[part]] / state.k,
                       1e-300)
        fh, dfh = _density(zh, df)
        fl, dfl = _density(zl, df)
        zh, zl = np.where(np.isfinite(zh), zh, 0.0), np.where(np.isfinite(zl), zl, 0.0)
        d0, d1 = -mu_b / sd, -mu_s / sd
        f, df_, zf, zdf = fh - fl, dfh - dfl, fh * zh - fl * zl, dfh * zh - dfl * zl
        first = [f * d0, f * d1, -zf]                                  # dT / dx
        second = {(0, 0): df_ * d0 * d0 - f * mu_bb / sd,
                  (0, 1): df_ * d0 * d1 - f * mu_bs / sd,
                  (0, 2): -(zdf + f) * d0, (1, 1): df_ * d1 * d1 - f * mu_ss / sd,
                  (1, 2): -(zdf + f) * d1,
                  (2, 2): dfh * zh * zh - dfl * zl * zl + zf}          # d2T / dx dx
        scale = (1 - lapse) / p
        loss -= np.bincount(gs, n * np.log(p), state.g)
        for i in range(3):
            grad[:, i] -= np.bincount(gs, n * scale * first[i], state.g)
        for (i, j), term in second.items():
            value = np.bincount(gs, n * (scale * term - scale * scale * first[i] * first[j]),
                                state.g)
            curve[:, i, j] -= value
            if i != j:
                curve[:, j, i] -= value
    return loss, grad, curve


def _raters_at_once(state: _Fit, expected_of, weighted: np.ndarray, *, steps: int = 10,
                    tolerance: float = 1e-6) -> _Entries:
    """Every rater's bias, log scale and log noise at once: the expected log-likelihood of
    each rater (a sum over the (code, grid point, spread) cells its ratings reach:
    :func:`_expected_entries`) maximised by Newton steps within the bounds (gradient and
    curvature analytic: :func:`_entry_derivatives`; each rater's step halved until its
    likelihood improves, only the raters still moving recomputed; after a step, only the
    raters it raised by ``tolerance`` of their objective or more: another is at its maximum
    to that tolerance, or its step failed and would fail again from the same point), the
    raters' sums taken together (:func:`numpy.bincount`); steps stop when the raters' summed
    gain falls below ``tolerance`` of their objective (1e-6: the fit's default). A
    generalised EM step, as the one-by-one optimiser's ten L-BFGS-B iterations are. Returns
    the E-step's expected counts (the lapse and df step uses them: :func:`_lapse_df_step`)."""
    entries = _expected_entries(state, expected_of, weighted)
    lower, upper = np.array(RATER_BOUNDS).T
    lapse, df = state.lapse, state.df
    x = np.stack([state.bias, state.log_scale, state.log_noise], axis=1)
    now = np.zeros(state.g)
    active = np.arange(state.g) > 0                 # the anonymous group has no parameters
    for _ in range(steps):
        part = entries.of(active)
        found, slope, curve = _entry_derivatives(state, x, part, lapse, df)
        now[active] = found[active]
        # Newton on the curvature's absolute eigenvalues (a saddle or a flat direction gives
        # a descent step), shortened to at most 0.5 a coordinate, halved until the rater
        # improves
        values, vectors = np.linalg.eigh(curve[active])
        floor = 1e-3 * np.maximum(1.0, state.ratings_of[active])[:, None]
        values = np.maximum(np.abs(values), floor)[:, None, :]
        step = np.zeros_like(x)
        step[active] = -np.einsum("gij,gkj,gk->gi", vectors / values, vectors, slope[active])
        step /= np.maximum(1.0, np.abs(step).max(axis=1) / 0.5)[:, None]
        # a rater whose step promises (to first order) under 1e-10 of its objective is at
        # its maximum: not halved eight times for nothing
        moving = active & (-(slope * step).sum(axis=1) > 1e-10 * np.maximum(1.0, np.abs(now)))
        gained = np.zeros(state.g)
        for _ in range(8):
            if not moving.any():
                break
            trial = np.where(moving[:, None], np.clip(x + step, lower, upper), x)
            found = _entry_losses(state, trial, part.of(moving), lapse, df)
            better = moving & (found < now)
            gained[better] = now[better] - found[better]
            x[better], now[better] = trial[better], found[better]
            moving &= ~better
            if not moving.any():
                break
            step /= 2
        active = gained > tolerance * np.maximum(1.0, np.abs(now))
        if gained.sum() < tolerance * max(1.0, float(np.abs(now[1:]).sum())):
            break
    state.bias[1:], state.log_scale[1:], state.log_noise[1:] = x[1:].T
    return entries


def _model(state: _Fit, log: CodedLog, total: float, iterations: int) -> CrowdModel:
    raters = None
    notes = [f"fitted by EM in {iterations} iterations, log-likelihood {total:.2f}"]
    weights = state.weights.reshape(len(GRID), len(SPREADS))
    if state.identity:
        honest = 1 - state.spam[1:]
        n = np.maximum(state.ratings_of[1:], 1)
        noise = state.sigma * np.exp(state.log_noise[1:])
        over_t = weights.sum(axis=1)
        spread_t = math.sqrt(float(np.average((GRID - np.average(GRID, weights=over_t)) ** 2,
                                              weights=over_t)))

        def spread(values, sampling):             # SD across raters less sampling variance
            var = float(np.average(values ** 2, weights=honest)) - float(np.mean(sampling))
            return math.sqrt(max(var, 0.0))

        estimates = (state.bias[1:], state.log_scale[1:], state.log_noise[1:])
        sds = [spread(estimates[0], noise ** 2 / n),
               spread(estimates[1], (noise / spread_t) ** 2 / n),
               spread(estimates[2], 1 / (2 * n))]

        def correlation(i, j):                    # the estimates' covariance over the SDs
            if sds[i] * sds[j] == 0:
                return 0.0
            cov = float(np.average(estimates[i] * estimates[j], weights=honest))
            return float(np.clip(cov / (sds[i] * sds[j]), -0.99, 0.99))

        raters = Raters(bias_sd=sds[0], scale_sd=sds[1], noise_sd=sds[2],
                        spammers=float(np.mean(state.spam[1:])),
                        correlation=(correlation(0, 1), correlation(0, 2), correlation(1, 2)))
        notes.append("rater spreads: the SD of the raters' estimates less their approximate "
                     "sampling variance (sigma^2/n for biases, 1/(2n) for log noises); their "
                     "correlations: the estimates' covariances over those SDs")
    return CrowdModel(grid=tuple(float(g) for g in GRID), spreads=tuple(float(v) for v in
                                                                        SPREADS),
                      weights=tuple(tuple(float(w) for w in row) for row in weights),
                      sigma=state.sigma, df=state.df, lapse=state.lapse, raters=raters,
                      scale=log.scale, notes=notes)


# -- draws ---------------------------------------------------------------------------------------

def draw_pairs(model: CrowdModel, n: int, rng: np.random.Generator) -> tuple[np.ndarray,
                                                                          np.ndarray]:
    """``n`` pairs' latent scores (on the model's scale) and spread multipliers, drawn jointly:
    a (grid point, spread) cell by its weight, spread uniformly over the cell."""
    grid, spreads = np.asarray(model.grid, float), np.asarray(model.spreads, float)
    weights = np.asarray(model.weights, float).ravel()
    cell = rng.choice(weights.size, n, p=weights / weights.sum())
    width = lambda values: float(values[1] - values[0]) if len(values) > 1 else 0.0  # noqa
    relative = grid[cell // len(spreads)] + rng.uniform(-0.5, 0.5, n) * width(grid)
    spread = np.exp(spreads[cell % len(spreads)] + rng.uniform(-0.5, 0.5, n) * width(spreads))
    low, high, _ = model.scale
    return low + relative * (high - low), spread


def draw_spreads(model: CrowdModel, scores, rng: np.random.Generator) -> np.ndarray:
    """Spread multipliers of pairs whose latent ``scores`` (scale units) are given: each
    drawn from the fitted spreads at the nearest grid point (the marginal where that point
    has no weight)."""
    grid, spreads = np.asarray(model.grid, float), np.asarray(model.spreads, float)
    weights = np.asarray(model.weights, float)
    low, high, _ = model.scale
    relative = (np.asarray(scores, float) - low) / (high - low)
    rows = np.abs(relative[:, None] - grid[None, :]).argmin(axis=1)
    marginal = weights.sum(axis=0)
    out = np.empty(len(rows))
    step = float(spreads[1] - spreads[0]) if len(spreads) > 1 else 0.0
    for i, row in enumerate(rows):
        w = weights[row] if weights[row].sum() > 0 else marginal
        out[i] = spreads[rng.choice(len(spreads), p=w / w.sum())] + rng.uniform(-0.5, 0.5) * step
    return np.exp(out)


def draw_raters(model: CrowdModel, n: int, rng: np.random.Generator, *,
                spammers: float | None = None) -> pd.DataFrame:
    """``n`` raters: ``bias`` (scale units), ``scale``, ``noise`` multipliers and ``spammer``
    (share: the model's unless ``spammers`` is given); bias, log scale and log noise jointly
    normal with the model's correlations (:meth:`Raters.cholesky`)."""
    raters = model.raters or Raters()
    low, high, _ = model.scale
    share = raters.spammers if spammers is None else spammers
    if any(raters.correlation):
        bias, log_scale, log_noise = raters.cholesky() @ rng.standard_normal((3, n))
    else:
        bias, log_scale, log_noise = (rng.normal(0, sd, n) for sd in (
            raters.bias_sd, raters.scale_sd, raters.noise_sd))
    return pd.DataFrame({
        "bias": bias * (high - low), "scale": np.exp(log_scale), "noise": np.exp(log_noise),
        "spammer": rng.random(n) < share})


def perceive(model: CrowdModel, scores, spreads, rng: np.random.Generator, *, bias=0.0,
             scale=1.0, noise=1.0) -> np.ndarray:
    """Unrounded latent responses (scale units) of raters to pairs of latent ``scores``: what
    a rater compares in a Best-Worst tuple, and what a rating rounds."""
    errors = latent_errors(model, rng, np.shape(scores))
    return responses(model, scores, spreads, errors, bias=bias, scale=scale, noise=noise)


def latent_errors(model: CrowdModel, rng: np.random.Generator, shape=None):
    """The standardised errors of :func:`perceive`'s responses: Student's t with the model's
    ``df`` (normal without one); one float where ``shape`` is None."""
    return rng.standard_normal(shape) if model.df is None else rng.standard_t(model.df, shape)


def responses(model: CrowdModel, scores, spreads, errors, *, bias=0.0, scale=1.0,
              noise=1.0) -> np.ndarray:
    """:func:`perceive`'s responses given its ``errors`` (:func:`latent_errors`)."""
    low, high, _ = model.scale
    width = high - low
    relative = rater_means((np.asarray(scores, float) - low) / width, np.asarray(bias) / width,
                           scale) + model.sigma * np.asarray(spreads) * np.asarray(noise) * errors
    return low + relative * width


def draw_ratings(model: CrowdModel, scores, spreads, rng: np.random.Generator, *, bias=0.0,
                 scale=1.0, noise=1.0, spammer=False) -> np.ndarray:
    """Ratings of (pair, rater) cells on the model's scale: the latent response rounded to the
    scale's step and clipped; a lapse (share ``lapse``) or a spammer's cell uniform over the
    steps. Arguments broadcast cell by cell."""
    seen = perceive(model, scores, spreads, rng, bias=bias, scale=scale, noise=noise)
    return ratings_of(model, seen, *lapse_draws(model, rng, seen.shape), spammer=spammer)


def lapse_draws(model: CrowdModel, rng: np.random.Generator, shape=None) -> tuple:
    """:func:`draw_ratings`' draws for lapses, in its order: a uniform (below ``lapse``: the
    cell lapses) and the step a lapse gives, uniform over the scale's steps; floats and ints
    where ``shape`` is None."""
    low, high, step = model.scale
    return rng.random(shape), rng.integers(0, int(round((high - low) / step)) + 1, shape)


def ratings_of(model: CrowdModel, seen, uniforms, picks, *, spammer=False) -> np.ndarray:
    """:func:`draw_ratings`' ratings of responses ``seen`` given its :func:`lapse_draws`."""
    low, high, step = model.scale
    k = int(round((high - low) / step)) + 1
    steps = np.clip(np.round((np.asarray(seen) - low) / step), 0, k - 1)
    random = (np.asarray(uniforms) < model.lapse) | np.asarray(spammer, bool)
    return low + np.where(random, picks, steps) * step


def simulate_like(model: CrowdModel, ratings: pd.DataFrame, rng: np.random.Generator, *,
                  replicates: int = 1) -> pd.DataFrame:
    """A log of the same design as ``ratings`` drawn from ``model`` (same number of pairs,
    ratings per pair and, where raters are identified, the same raters' cells filled by fresh
    raters; an anonymous rating gets a fresh rater of its own), ``replicates`` times over
    (pairs suffixed ``#r``)."""
    log = code_log(ratings, scale=model.scale[:2], step=model.scale[2])
    frames = []
    for r, values in enumerate(_drawn_like(model, log, rng, replicates)):
        frames.append(pd.DataFrame({
            "rater_id": np.where(log.rater > 0, [f"r{k}" for k in log.rater], "?"),
            "word1": log.pairs["word1"].to_numpy()[log.pair],
            "word2": log.pairs["word2"].to_numpy()[log.pair] + f"#{r}",
            "rating": values}))
    return pd.concat(frames, ignore_index=True)


def simulated_pair_sds(model: CrowdModel, log: CodedLog, rng: np.random.Generator, *,
                       replicates: int = 1) -> np.ndarray:
    """The per-pair SDs (:func:`pair_sds`) of :func:`simulate_like`'s log, the same draws,
    one replicate at a time and without its text: memory grows with the log's ratings as
    numbers, not ``replicates`` times its words."""
    sds = []
    for values in _drawn_like(model, log, rng, replicates):
        sds.append(pd.Series(values).groupby(log.pair).std().dropna().to_numpy())
    return np.concatenate(sds)


def _drawn_like(model: CrowdModel, log: CodedLog, rng: np.random.Generator, replicates: int):
    """The ratings of each replicate of :func:`simulate_like`, in the log's order."""
    n = int(log.pair.max()) + 1
    for _ in range(replicates):
        scores, spreads = draw_pairs(model, n, rng)
        named = draw_raters(model, len(log.rater_ids) + 1, rng)
        fresh = draw_raters(model, len(log.pair), rng)
        who = np.where(log.rater > 0, log.rater, 0)
        pick = lambda c: np.where(log.rater > 0, named[c].to_numpy()[who],  # noqa: E731
                                  fresh[c].to_numpy())
        yield draw_ratings(model, scores[log.pair], spreads[log.pair], rng,
                           bias=pick("bias"), scale=pick("scale"), noise=pick("noise"),
                           spammer=pick("spammer"))


def simulate_log(model: CrowdModel, n_pairs: int, ratings_per_pair: int,
                 rng: np.random.Generator, *, raters: int | None = None) -> pd.DataFrame:
    """A log of ``n_pairs`` pairs, ``ratings_per_pair`` each: by ``raters`` identified raters
    who rate every pair (``ratings_per_pair`` must then equal ``raters``), else anonymous
    ratings, each by a fresh rater. Columns ``rater_id, word1, word2, rating, truth``."""
    pair = np.repeat(np.arange(n_pairs), ratings_per_pair)
    scores, spreads = draw_pairs(model, n_pairs, rng)
    if raters:
        people = draw_raters(model, raters, rng)
        who = np.tile(np.arange(raters), n_pairs)
        ids = np.array([f"r{k + 1}" for k in who])
    else:
        people = draw_raters(model, len(pair), rng)
        who = np.arange(len(pair))
        ids = np.array([f"?{k}" for k in who])
    values = draw_ratings(model, scores[pair], spreads[pair], rng,
                          bias=people["bias"].to_numpy()[who],
                          scale=people["scale"].to_numpy()[who],
                          noise=people["noise"].to_numpy()[who],
                          spammer=people["spammer"].to_numpy()[who])
    return pd.DataFrame({"rater_id": ids, "word1": [f"w{i}" for i in pair],
                         "word2": "x", "rating": values, "truth": scores[pair]})


def pair_sds(ratings: pd.DataFrame) -> pd.Series:
    """Each pair's SD of its ratings (``ddof = 1``; pairs of two or more ratings)."""
    frame = ratings
    if "kind" in frame.columns:
        frame = frame[frame["kind"].astype(str) != "checkpoint"]
    values = pd.to_numeric(frame["rating"], errors="coerce")
    return values.groupby([frame["word1"].astype(str), frame["word2"].astype(str)],
                          sort=False).std().dropna()


def sd_quantiles(ratings: pd.DataFrame, quantiles=QUANTILES) -> list[float]:
    """Quantiles of the per-pair SDs (:func:`pair_sds`)."""
    return [float(v) for v in np.quantile(pair_sds(ratings).to_numpy(), quantiles)]


def posterior_scores(model: CrowdModel, ratings: pd.DataFrame, *,
                     iterations: int = 10) -> pd.DataFrame:
    """Each pair's posterior mean latent score under ``model`` (ratings on the model's
    scale): the crowd's distribution of scores and spreads as prior, each identified rater's
    bias and scale corrected and its ratings weighted by its noise (estimated from
    ``ratings`` with the model's other figures held), spammer-likely raters weighted down
    (the subject-model score of ITU-T P.913 section 12.4). Returns ``word1, word2, score,
    sd`` (posterior SD), scale units."""
    low, high, step = model.scale
    log = code_log(ratings, scale=(low, high), step=step)
    state = _Fit(log, len(log.rater_ids) >= 3, model.raters)    # anonymous: over raters
    weights = np.asarray(model.weights, float)
    if weights.shape != (len(GRID), len(SPREADS)) or not (
            np.allclose(model.grid, GRID) and np.allclose(model.spreads, SPREADS)):
        raise InputError("the crowd was fitted on another grid than this lexgold's; refit it",
                         field="grid")
    state.weights = weights.ravel() / weights.sum()
    state.sigma, state.lapse, state.df = model.sigma, model.lapse, model.df
    for _ in range(iterations if state.identity else 0):
        sigma = state.sigma
        _raters_step(state, state.posterior(state.pair_loglik(state.lapse, state.df)), log)
        state.sigma = sigma
    post = state.posterior(state.pair_loglik(state.lapse, state.df))
    over_t = post[state.row].reshape(state.n, len(GRID), len(SPREADS)).sum(axis=2)
    mean = over_t @ GRID
    sd = np.sqrt(np.maximum(over_t @ GRID ** 2 - mean ** 2, 0))
    return log.pairs.assign(score=low + mean * (high - low), sd=sd * (high - low))


def describe(model: CrowdModel) -> dict:
    """The model's figures on its scale (points), for printing."""
    low, high, step = model.scale
    width = high - low
    weights = np.asarray(model.weights, float)
    over_t = weights.sum(axis=1) / weights.sum()
    grid = np.asarray(model.grid, float)
    cdf = np.cumsum(over_t)
    quantile = lambda q: low + float(grid[np.searchsorted(cdf, q)]) * width  # noqa: E731
    spreads = np.exp(np.asarray(model.spreads))
    over_m = weights.sum(axis=0) / weights.sum()
    cdf_m = np.cumsum(over_m)
    noise = lambda q: float(model.sigma * spreads[np.searchsorted(cdf_m, q)] * width)  # noqa
    out = {"scale": [low, high, step], "sigma": model.sigma * width,
           "typical_noise_sd": model.typical_sigma * width,
           "pair_noise_quantiles": {f"{q:g}": noise(q) for q in (0.1, 0.5, 0.9)},
           "pair_spread_tau": model.tau, "df": model.df, "lapse": model.lapse,
           "score_quantiles": {f"{q:g}": quantile(q) for q in (0.1, 0.25, 0.5, 0.75, 0.9)},
           "score_below_end": float(over_t[grid < 0.5 * step / width].sum()),
           "score_above_end": float(over_t[grid > 1 - 0.5 * step / width].sum())}
    if model.raters is not None:
        r = model.raters
        out["raters"] = {"bias_sd": r.bias_sd * width, "scale_sd_log": r.scale_sd,
                         "noise_sd_log": r.noise_sd, "spammers": r.spammers}
    return out


#: bounds of the lapse share and of the Student-t's degrees of freedom
LAPSE_BOUNDS, DF_BOUNDS = (1e-5, 0.5), (1.0, 300.0)


def _lapse_df_step(state: _Fit, entries: _Entries, *, step: float = 0.02,
                   steps: int = 10) -> None:
    """The M-step of ``lapse`` and ``df`` on the E-step's expected counts (:class:`_Entries`,
    each weighted by its rater's honesty, as in :meth:`_Fit.pair_loglik`), the raters'
    parameters held: for a given ``df`` the expected log-likelihood is concave in ``lapse``
    (a mixture weight), maximised by Newton steps on the honest model's probabilities computed
    once; ``df`` by Newton steps on that maximum in ``log df`` (slope and curvature by
    differences over ``step``; each at most 1, halved until it improves; up to ``steps``,
    until a step moves ``log df`` less than 0.001; the entries' standardised bounds, which do
    not depend on ``df``, computed once). Expectation conditional maximisation
    (Meng & Rubin 1993): its fixed point is the marginal likelihood's maximum."""
    x = np.stack([state.bias, state.log_scale, state.log_noise], axis=1)
    weight = entries.n * (1 - state.spam)[entries.g]
    uniform = (_bounds(state.k, state.h)[2] / state.k)[entries.q]
    bounds = [_entry_bounds(state, x, part, entries)[:2] for part in entries.blocks()]

    def best_lapse(df) -> tuple[float, float]:
        honest_p = np.concatenate([_cdf(zh, df, entries.many) - _cdf(zl, df, entries.many)
                                   for zl, zh in bounds])
        gap = uniform - honest_p
        lapse, ratio = state.lapse, np.empty_like(gap)

        def mixed(lapse):              # honest_p + lapse * gap, at least 1e-300, in ratio
            np.multiply(gap, lapse, out=ratio)
            np.add(ratio, honest_p, out=ratio)
            return np.maximum(ratio, 1e-300, out=ratio)

        for _ in range(20):
            np.divide(gap, mixed(lapse), out=ratio)
            slope = weight @ ratio
            ratio *= ratio
            moved = float(np.clip(lapse + slope / max(weight @ ratio, 1e-300), *LAPSE_BOUNDS))
            done, lapse = abs(moved - lapse) < 1e-10, moved
            if done:
                break
        return float(weight @ np.log(mixed(lapse), out=ratio)), lapse

    if state.df is None:
        state.lapse = best_lapse(None)[1]
        return
    low, high = (math.log(v) for v in DF_BOUNDS)
    at = math.log(state.df)
    now, lapse = best_lapse(state.df)
    for _ in range(steps):
        down, up = (best_lapse(math.exp(min(high, max(low, at + d))))[0]
                    for d in (-step, step))
        slope, curve = (up - down) / (2 * step), (up - 2 * now + down) / step ** 2
        move = max(-1.0, min(1.0, -slope / curve if curve < 0 else math.copysign(1.0, slope)))
        for _ in range(4):
            where = min(high, max(low, at + move))
            found, found_lapse = best_lapse(math.exp(where))
            if found > now:
                break
            move /= 2
        if found <= now:
            break
        done = abs(where - at) < 1e-3
        at, now, lapse = where, found, found_lapse
        if done:
            break
    state.df, state.lapse = float(math.exp(at)), lapse
