"""One metadata filter language for every backend: Pinecone's (MongoDB-style) operators.

    {"record_keeper": "Acme"}                      implicit $eq
    {"plan_type": {"$in": ["401(k)", "403(b)"]}}
    {"$and": [{...}, {...}]}, {"$or": [...]}
    {"year": {"$gte": 2020, "$lt": 2025}}          several operators on one key are ANDed

Semantics (as Pinecone/MongoDB): a list-valued field matches $eq/$in when any element matches and
$ne/$nin when no element does; $ne/$nin also match records without the field; $gt/$gte/$lt/$lte
compare numbers only. `MetadataIndex` evaluates a filter over all rows at once with NumPy, so the
same mask restricts the BM25 and the dense branch; Pinecone receives the validated dict unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import InputError

COMPARISON = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists")
LOGICAL = ("$and", "$or")
Filter = dict[str, Any]


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool)


MAX_DEPTH, MAX_CLAUSES, MAX_LIST = 8, 200, 1000


def validate_filter(flt: Any, _path: str = "filter", _depth: int = 0, _count: list[int] | None = None) -> Filter:
    """Check a filter's shape, types and size; raise InputError naming the offending part."""
    if flt is None:
        return {}
    count = _count if _count is not None else [0]
    count[0] += 1
    if _depth > MAX_DEPTH:
        raise InputError(f"{_path}: filters nest at most {MAX_DEPTH} levels deep")
    if count[0] > MAX_CLAUSES:
        raise InputError(f"filter has more than {MAX_CLAUSES} clauses")
    if not isinstance(flt, dict):
        raise InputError(f"{_path} must be an object, got {type(flt).__name__}")
    for key, value in flt.items():
        where = f"{_path}.{key}"
        if key in LOGICAL:
            if not isinstance(value, list) or not value:
                raise InputError(f"{where} must be a non-empty list of filters")
            for i, sub in enumerate(value):
                validate_filter(sub, f"{where}[{i}]", _depth + 1, count)
        elif not isinstance(key, str):
            raise InputError(f"{_path}: keys must be strings, got {type(key).__name__}")
        elif key.startswith("$"):
            raise InputError(f"{where}: unknown operator {key!r} (allowed: {', '.join(LOGICAL)})")
        elif isinstance(value, dict):
            if not value:
                raise InputError(f"{where} has no operator")
            for op, operand in value.items():
                _validate_op(op, operand, f"{where}.{op}")
        elif not _scalar(value):
            raise InputError(f"{where} must be a string, number, boolean or an operator object")
    return flt


def _validate_op(op: str, operand: Any, where: str) -> None:
    if op not in COMPARISON:
        raise InputError(f"{where}: unknown operator (allowed: {', '.join(COMPARISON)})")
    if op in ("$eq", "$ne") and not _scalar(operand):
        raise InputError(f"{where} needs a string, number or boolean")
    if op in ("$gt", "$gte", "$lt", "$lte") and (isinstance(operand, bool) or not isinstance(operand, int | float)):
        raise InputError(f"{where} needs a number")
    if op in ("$in", "$nin") and isinstance(operand, list) and len(operand) > MAX_LIST:
        raise InputError(f"{where} lists more than {MAX_LIST} values")
    if op in ("$in", "$nin") and (not isinstance(operand, list) or not all(
            isinstance(v, str | int | float) and not isinstance(v, bool) for v in operand)):
        raise InputError(f"{where} needs a list of strings or numbers")
    if op == "$exists" and not isinstance(operand, bool):
        raise InputError(f"{where} needs true or false")


def _norm(value: Any) -> Any:
    """Pinecone stores numbers as float64: 2020 and 2020.0 are equal, '2020' is not."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int | float):
        return ("n", float(value))
    return ("s", str(value))


def matches(flt: Filter, metadata: dict[str, Any]) -> bool:
    """Reference evaluation of a filter on one record (used for small sets and in tests)."""
    for key, cond in flt.items():
        if key == "$and":
            if not all(matches(sub, metadata) for sub in cond):
                return False
        elif key == "$or":
            if not any(matches(sub, metadata) for sub in cond):
                return False
        else:
            ops = cond if isinstance(cond, dict) else {"$eq": cond}
            if not all(_match_op(op, operand, key in metadata, metadata.get(key)) for op, operand in ops.items()):
                return False
    return True


def _match_op(op: str, operand: Any, present: bool, value: Any) -> bool:
    values = [_norm(v) for v in value] if isinstance(value, list) else ([_norm(value)] if present else [])
    if op == "$exists":
        return present == operand
    if op == "$eq":
        return _norm(operand) in values
    if op == "$ne":
        return _norm(operand) not in values
    if op == "$in":
        return any(_norm(o) in values for o in operand)
    if op == "$nin":
        return not any(_norm(o) in values for o in operand)
    if not present or isinstance(value, bool) or not isinstance(value, int | float):
        return False
    x, y = float(value), float(operand)
    return {"$gt": x > y, "$gte": x >= y, "$lt": x < y, "$lte": x <= y}[op]


class _Column:
    __slots__ = ("codes", "list_rows", "numeric", "present")

    def __init__(self, n: int):
        self.present = np.zeros(n, dtype=bool)
        self.codes = np.full(n, -1, dtype=np.int32)
        self.numeric = np.full(n, np.nan, dtype=np.float64)
        self.list_rows: dict[int, np.ndarray] = {}


class MetadataIndex:
    """Columnar view of chunk metadata for vectorised filter evaluation (1M rows in milliseconds)."""

    def __init__(self, records: Sequence[dict[str, Any]]):
        self.n = len(records)
        self.categories: dict[Any, int] = {}
        self.columns: dict[str, _Column] = {}
        list_members: dict[str, dict[int, list[int]]] = {}
        for row, md in enumerate(records):
            for key, value in md.items():
                col = self.columns.get(key)
                if col is None:
                    col = self.columns[key] = _Column(self.n)
                col.present[row] = True
                if isinstance(value, list):
                    members = list_members.setdefault(key, {})
                    for v in value:
                        members.setdefault(self._code(v), []).append(row)
                else:
                    col.codes[row] = self._code(value)
                    if isinstance(value, int | float) and not isinstance(value, bool):
                        col.numeric[row] = float(value)
        for key, members in list_members.items():
            self.columns[key].list_rows = {c: np.unique(np.asarray(r, dtype=np.int64)) for c, r in members.items()}

    def _code(self, value: Any) -> int:
        key = _norm(value)
        code = self.categories.get(key)
        if code is None:
            code = self.categories[key] = len(self.categories)
        return code

    def values(self, key: str) -> list[Any]:
        """Distinct values of a key (facet detection reads these)."""
        col = self.columns.get(key)
        if col is None:
            return []
        codes = set(np.unique(col.codes[col.codes >= 0]).tolist()) | set(col.list_rows)
        inverse = {c: v for v, c in self.categories.items()}
        return sorted(inverse[c][1] for c in codes if inverse[c][0] == "s")

    def mask(self, flt: Filter | None) -> np.ndarray | None:
        """Boolean row mask, or None when the filter is empty (no restriction)."""
        if not flt:
            return None
        return self._eval(flt)

    def _eval(self, flt: Filter) -> np.ndarray:
        out = np.ones(self.n, dtype=bool)
        for key, cond in flt.items():
            if key == "$and":
                for sub in cond:
                    out &= self._eval(sub)
            elif key == "$or":
                any_mask = np.zeros(self.n, dtype=bool)
                for sub in cond:
                    any_mask |= self._eval(sub)
                out &= any_mask
            else:
                ops = cond if isinstance(cond, dict) else {"$eq": cond}
                for op, operand in ops.items():
                    out &= self._op(key, op, operand)
        return out

    def _eq(self, col: _Column | None, value: Any) -> np.ndarray:
        result = np.zeros(self.n, dtype=bool)
        if col is None:
            return result
        code = self.categories.get(_norm(value))
        if code is None:
            return result
        result |= col.codes == code
        rows = col.list_rows.get(code)
        if rows is not None:
            result[rows] = True
        return result

    def _op(self, key: str, op: str, operand: Any) -> np.ndarray:
        col = self.columns.get(key)
        if op == "$exists":
            present = col.present if col is not None else np.zeros(self.n, dtype=bool)
            return present.copy() if operand else ~present
        if op == "$eq":
            return self._eq(col, operand)
        if op == "$ne":
            return ~self._eq(col, operand)
        if op in ("$in", "$nin"):
            hit = np.zeros(self.n, dtype=bool)
            for v in operand:
                hit |= self._eq(col, v)
            return hit if op == "$in" else ~hit
        if col is None:
            return np.zeros(self.n, dtype=bool)
        with np.errstate(invalid="ignore"):
            y = float(operand)
            return {"$gt": col.numeric > y, "$gte": col.numeric >= y,
                    "$lt": col.numeric < y, "$lte": col.numeric <= y}[op]

    # --- persistence: the index is derived, but rebuilding it from JSON rows costs seconds at 1M ---
    def save(self, path: str) -> None:
        arrays: dict[str, np.ndarray] = {}
        keys = list(self.columns)
        for i, key in enumerate(keys):
            col = self.columns[key]
            arrays[f"p{i}"], arrays[f"c{i}"], arrays[f"n{i}"] = col.present, col.codes, col.numeric
            codes = sorted(col.list_rows)
            arrays[f"lc{i}"] = np.asarray(codes, dtype=np.int64)
            arrays[f"lo{i}"] = np.cumsum([0] + [len(col.list_rows[c]) for c in codes]).astype(np.int64)
            arrays[f"lr{i}"] = (np.concatenate([col.list_rows[c] for c in codes]) if codes
                                else np.zeros(0, dtype=np.int64))
        header = {"n": self.n, "keys": keys, "categories": [[t, v, c] for (t, v), c in self.categories.items()]}
        arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
        with open(path, "wb") as fh:
            np.savez(fh, **arrays)

    @classmethod
    def load(cls, path: str) -> MetadataIndex:
        data = np.load(path)
        header = json.loads(bytes(data["header"]).decode())
        self = cls.__new__(cls)
        self.n = header["n"]
        self.categories = {(t, v): c for t, v, c in header["categories"]}
        self.columns = {}
        for i, key in enumerate(header["keys"]):
            col = _Column.__new__(_Column)
            col.present, col.codes, col.numeric = data[f"p{i}"], data[f"c{i}"], data[f"n{i}"]
            codes, offsets, rows = data[f"lc{i}"], data[f"lo{i}"], data[f"lr{i}"]
            col.list_rows = {int(c): rows[offsets[j]:offsets[j + 1]] for j, c in enumerate(codes)}
            self.columns[key] = col
        return self
