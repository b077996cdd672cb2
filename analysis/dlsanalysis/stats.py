"""Repeats aggregated: mean, sample standard deviation, count and a two-sided 95 % confidence
interval of the mean from Student's t (n - 1 degrees of freedom; none for a single value)."""

import math

import pandas as pd
from scipy import stats as st


def aggregate(df, by, metric, confidence=0.95):
    """One row per group of `by` columns: n, mean, std, ci_low, ci_high of `metric`."""
    rows = []
    for key, g in df.groupby(by if len(by) > 1 else by[0], sort=True, dropna=False):
        x = g[metric].dropna().astype(float)
        n = len(x)
        mean = x.mean() if n else math.nan
        std = x.std(ddof=1) if n > 1 else 0.0
        half = st.t.ppf(0.5 + confidence / 2, n - 1) * std / math.sqrt(n) if n > 1 else math.nan
        key = key if isinstance(key, tuple) else (key,)
        rows.append(dict(zip(by, key, strict=True), n=n, mean=mean, std=std, ci_low=mean - half, ci_high=mean + half))
    return pd.DataFrame(rows)
