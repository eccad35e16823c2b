"""Bootstrap replicates of IAA-1 and IAA-2 over a dense items x raters matrix, in batches.

Used by :func:`lexgold.process.agreement.bootstrap_over_pairs` and ``agreement_by_subset`` (the
percentile bootstrap over pairs; SimLex-999 section 4.1, HyperLex section 5) for a group where
every rater rated every item (a SimLex tranche). A replicate is described by how often it drew
each item (its weights), not by its drawn rows.

Each rater's values are coded once by their order (0 for its smallest value, ...). In a
replicate, the average rank of a value is (drawn values below it) + (drawn values equal to it
+ 1) / 2: exactly what ``scipy.stats.rankdata`` gives (whole and half numbers). The drawn
counts of every rater's levels in every replicate of a batch come from one sparse product
(levels x items, times items x replicates), with no per-cell index arrays:

- IAA-1 (closed form, see :func:`lexgold.process.agreement._dense_rho_sum`): with z_i the
  centred, unit-length rank column of rater i, the sum over rater pairs of rho is
  (|sum_i z_i|^2 - sum_i |z_i|^2) / 2; sum_i z_i per item is a second sparse product. The
  same figure to about 1e-15 as ranking every drawn row, not bit for bit (another order of
  summation).
- IAA-2 (rho of each rater against the mean of the others): the leave-one-out means are
  ranked through the order the raters share (:class:`_NearOrder`, one small items x items
  product), or coded like the ratings when few raters share it. Every sum of the correlation
  (of ranks, multiples of 1/2, times whole weights) is exact in floating point whatever the
  order or the number of BLAS threads, so the figures are the same bytes as ranking every
  drawn row.
"""

from __future__ import annotations

import numpy as np

#: most cells (items x raters x replicates, or raters x levels x replicates) of one batch;
#: each array of a batch is 8 MB at most (at 2,000,000 the batches of a 10,000-rater study's
#: per-subset bootstrap were the peak of `lexgold process`). Batches of two
#: replicates or more give the same bytes.
BATCH_CELLS = 1_000_000


def level_codes(matrix: np.ndarray) -> tuple[np.ndarray, int]:
    """Per column of ``matrix`` (no missing cell): each value's order among the column's
    distinct values (0 for the smallest), and the largest number of distinct values."""
    order = np.argsort(matrix, axis=0, kind="stable")
    ordered = np.take_along_axis(matrix, order, axis=0)
    step = np.ones(ordered.shape, dtype=bool)
    step[1:] = ordered[1:] != ordered[:-1]
    codes = np.empty(matrix.shape, dtype=np.intp)
    np.put_along_axis(codes, order, np.cumsum(step, axis=0) - 1, axis=0)
    return codes, int(codes.max()) + 1 if codes.size else 1


class _Levels:
    """One matrix's level codes as sparse indicator matrices (rater, level) x item."""

    def __init__(self, matrix: np.ndarray):
        items, raters = matrix.shape
        codes, self.levels = level_codes(matrix)
        self.cell = np.arange(raters) * self.levels + codes         # items x raters
        shape = (raters * self.levels, items)
        ones = np.ones(items * raters)
        from scipy import sparse  # here: `lexgold agree` never needs it

        self.by_level = sparse.csr_matrix(
            (ones, (self.cell.ravel(), np.repeat(np.arange(items), raters))), shape=shape)
        self.by_item = self.by_level.T.tocsr()

    def ranks(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Drawn count and average rank of each level: raters x levels x replicates, for
        ``weights`` (items x replicates: how often each replicate drew each item)."""
        counts = np.asarray(self.by_level @ weights).reshape(-1, self.levels,
                                                               weights.shape[1])
        # drawn values below each level: a running sum over the few levels, slice by slice
        # (whole numbers: exact; numpy's cumsum along the middle axis is several times slower)
        below = np.empty_like(counts)
        below[:, 0] = 0.0
        for level in range(1, self.levels):
            np.add(below[:, level - 1], counts[:, level - 1], out=below[:, level])
        below += (counts + 1) / 2
        return counts, below


class ReplicateTerms:
    """IAA-1's or IAA-2's terms of bootstrap replicates of one dense matrix (items x raters,
    no missing cell, at least two raters)."""

    def __init__(self, matrix: np.ndarray, name: str):
        self.name = name
        self.items, self.raters = matrix.shape
        self.x = _Levels(matrix)
        self.others = self.near = None
        if name == "iaa2":
            total = matrix.sum(axis=-1, keepdims=True)
            others = (total - matrix) / (self.raters - 1)
            self.near = _NearOrder.of(others)
            if self.near is None:
                self.others = _Levels(others)

    def batch(self) -> int:
        """Replicates per batch, at most :data:`BATCH_CELLS` cells."""
        levels = max(self.x.levels, self.others.levels if self.others else 0)
        if self.near is not None:
            levels = max(levels, len(self.near.first))
        cells = self.raters * max(self.items if self.others else 0, levels)
        return max(1, BATCH_CELLS // max(1, cells))

    def terms(self, rows: np.ndarray, min_overlap: int) -> list:
        """Per replicate (``rows``: replicates x drawn rows of the matrix): IAA-1's
        ``(rho sum, defined pairs)``, or IAA-2's ``(rho, n)`` per rater."""
        replicates, drawn = rows.shape
        if self.name == "iaa1" and drawn < min_overlap:
            return [(0.0, 0)] * replicates
        cell = (rows + np.arange(replicates)[:, None] * self.items).ravel()
        weights = np.bincount(cell, minlength=replicates * self.items).astype(float)
        weights = weights.reshape(replicates, self.items).T          # items x replicates
        if self.name == "iaa1":
            return self._iaa1(weights, drawn)
        return self._iaa2(weights, drawn, min_overlap)

    def _iaa1(self, weights, drawn):
        counts, average = self.x.ranks(weights)
        centred = average - (drawn + 1) / 2
        squares = (counts * centred * centred).sum(axis=1)          # raters x replicates
        varying = squares > 1e-9 * drawn
        with np.errstate(invalid="ignore", divide="ignore"):
            unit = np.where(varying[:, None, :], centred / np.sqrt(squares)[:, None, :], 0.0)
        summed = self.x.by_item @ unit.reshape(-1, weights.shape[1])  # items x replicates
        # |z_i|^2 is 1 up to rounding: subtract it as computed (as _dense_rho_sum does)
        rho_sum = ((weights * summed * summed).sum(axis=0)
                   - (counts * unit * unit).sum(axis=(0, 1))) / 2
        k = varying.sum(axis=0)
        return [(float(a), int(b) * (int(b) - 1) // 2) for a, b in zip(rho_sum, k)]

    def _iaa2(self, weights, drawn, min_overlap):
        x_counts, x = self.x.ranks(weights)
        n = np.full(self.raters, drawn)
        mx = (x_counts * x).sum(axis=1) / drawn                     # raters x replicates
        replicates = weights.shape[1]
        if self.near is not None:
            sum_xy, sum_yy = self.near.sums(self.x, x, weights)
            my = mx                   # both (drawn + 1) / 2 exactly: sums of average ranks
        else:
            y_counts, y = self.others.ranks(weights)
            my = (y_counts * y).sum(axis=1) / drawn
            drawn_x = x.reshape(-1, replicates)[self.x.cell]          # items x raters x reps
            drawn_x *= y.reshape(-1, replicates)[self.others.cell]
            drawn_x *= weights[:, None, :]
            sum_xy, sum_yy = drawn_x.sum(axis=0), (y_counts * y * y).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            sxy = sum_xy - drawn * mx * my
            sxx = (x_counts * x * x).sum(axis=1) - drawn * mx * mx
            syy = sum_yy - drawn * my * my
            r = sxy / np.sqrt(sxx * syy)
        r[(drawn < max(min_overlap, 2)) | (sxx <= 1e-9 * drawn) | (syy <= 1e-9 * drawn)] = np.nan
        r = np.clip(r, -1.0, 1.0)
        return [(r[:, b], n) for b in range(replicates)]


class _NearOrder:
    """The ranks of the leave-one-out means of the others (IAA-2) without ranking per rater.

    With many raters, rater r's mean of the others on item j, (T_j - x_jr) / (R - 1), orders
    the items almost as the item totals T_j do: two items are ordered the same way for every
    rater unless the ranges of their values over raters overlap ("near" pairs). With W the
    weights of a replicate, the average rank of item j for rater r is
    sum_j' W_j' ([y_j'r < y_jr] + [y_j'r == y_jr] / 2) + 1/2 = (K W)_j + 1/2 + c_rj, where K
    holds the comparisons shared by every rater and c_rj sums rater r's own comparisons over
    the near pairs of j. Products and sums of these (multiples of 1/4) are exact, so the
    figures are those of ranking every rater's column.
    """

    #: most near pairs, as a share of all item pairs, for this route to pay
    MAX_NEAR = 0.05

    def __init__(self, shared, first, second, comparison):
        self.shared = shared            # items x items: comparisons shared by every rater
        self.first, self.second = first, second                      # near pairs (j, j')
        self.rows, row = np.unique(first, return_inverse=True)       # items with near pairs
        raters = comparison.shape[1]
        # (near item, rater) x item: rater r's comparison of near item j with item j'
        from scipy import sparse

        self.own = sparse.csr_matrix(
            (comparison.ravel(), ((row[:, None] * raters + np.arange(raters)).ravel(),
                                  np.repeat(second, raters))),
            shape=(len(self.rows) * raters, len(shared)))

    @classmethod
    def of(cls, others: np.ndarray):
        """The near-order form of ``others`` (items x raters), or None when too many pairs
        of items are near (few raters, close means)."""
        low, high = others.min(axis=1), others.max(axis=1)
        below = high[None, :] < low[:, None]             # [j, j']: y_j' < y_j for every rater
        near = ~below & ~(low[None, :] > high[:, None])
        np.fill_diagonal(near, False)
        first, second = np.nonzero(near)
        if len(first) > cls.MAX_NEAR * others.shape[0] ** 2:
            return None
        shared = below + 0.5 * np.eye(len(others))
        a, b = others[first], others[second]
        comparison = (b < a) + 0.5 * (b == a)
        return cls(shared, first, second, comparison)

    def sums(self, x_levels: _Levels, x: np.ndarray, weights: np.ndarray):
        """Per rater and replicate: sum over drawn rows of x rank times y rank, and of the
        y rank squared. ``x``: average ranks per rater, level and replicate."""
        replicates = weights.shape[1]
        shared = self.shared @ weights + 0.5                             # items x reps
        weighted = weights * shared
        by_level = np.asarray(x_levels.by_level @ weighted).reshape(x.shape)
        sum_xy = (x * by_level).sum(axis=1)                             # raters x reps
        sum_yy = np.broadcast_to((weighted * shared).sum(axis=0), sum_xy.shape).copy()
        if len(self.first):
            # c[j, r, b]: rater r's own comparisons over the near pairs of item j
            rows = self.rows
            own = np.asarray(self.own @ weights).reshape(len(rows), -1, replicates)
            w = weights[rows]
            x_rows = x.reshape(-1, replicates)[x_levels.cell[rows]]     # near items x r x b
            sum_xy += np.einsum("jb,jrb,jrb->rb", w, x_rows, own)
            sum_yy += (np.einsum("jb,jrb->rb", 2 * w * shared[rows], own)
                       + np.einsum("jb,jrb,jrb->rb", w, own, own))
        return sum_xy, sum_yy
