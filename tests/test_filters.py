from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citewise.errors import InputError
from citewise.retrieval.filters import MetadataIndex, matches, validate_filter

RECORDS = [
    {"record_keeper": "Acme", "plan_type": "401(k)", "tags": ["loan", "fees"], "year": 2020, "active": True},
    {"record_keeper": "Summit", "plan_type": "403(b)", "tags": ["loan"], "year": 2024},
    {"record_keeper": "Acme", "plan_type": "403(b)", "year": 2024.0, "active": False},
    {"plan_type": "457(b)", "tags": ["rmd"]},
]


@pytest.mark.parametrize("flt,expected", [
    ({"record_keeper": "Acme"}, [0, 2]),
    ({"record_keeper": {"$ne": "Acme"}}, [1, 3]),  # missing field matches $ne, as in MongoDB/Pinecone
    ({"tags": "loan"}, [0, 1]),  # list field: any element
    ({"tags": {"$in": ["fees", "rmd"]}}, [0, 3]),
    ({"tags": {"$nin": ["loan"]}}, [2, 3]),
    ({"year": {"$gte": 2024}}, [1, 2]),
    ({"year": 2024}, [1, 2]),  # 2024 == 2024.0
    ({"year": "2024"}, []),  # but not the string
    ({"year": {"$gt": 2019, "$lt": 2021}}, [0]),
    ({"active": {"$exists": False}}, [1, 3]),
    ({"active": True}, [0]),
    ({"$or": [{"record_keeper": "Summit"}, {"plan_type": "457(b)"}]}, [1, 3]),
    ({"$and": [{"record_keeper": "Acme"}, {"plan_type": {"$in": ["403(b)"]}}]}, [2]),
    ({"unknown": "x"}, []),
])
def test_filter_semantics(flt: dict, expected: list[int]) -> None:
    index = MetadataIndex(RECORDS)
    assert np.flatnonzero(index.mask(flt)).tolist() == expected
    assert [i for i, r in enumerate(RECORDS) if matches(flt, r)] == expected


@pytest.mark.parametrize("flt,message", [
    ({"$foo": []}, "unknown operator"), ({"a": {"$regex": "x"}}, "unknown operator"),
    ({"a": {"$gt": "x"}}, "needs a number"), ({"a": {"$in": "x"}}, "list"), ({"$and": []}, "non-empty"),
    ({"a": [1, 2]}, "string, number, boolean"), ({"a": {}}, "no operator"), ("x", "must be an object"),
    ({"a": {"$exists": 1}}, "true or false"),
])
def test_invalid_filters_are_rejected_with_the_offending_part(flt: object, message: str) -> None:
    with pytest.raises(InputError, match=message):
        validate_filter(flt)


_values = st.one_of(st.sampled_from(["a", "b", "c"]), st.integers(0, 3), st.booleans())
_record = st.dictionaries(st.sampled_from(["k1", "k2", "tags"]),
                          st.one_of(_values, st.lists(st.sampled_from(["a", "b", "c"]), max_size=3)), max_size=3)
_leaf = st.one_of(
    st.builds(lambda k, v: {k: v}, st.sampled_from(["k1", "k2", "tags"]), _values),
    st.builds(lambda k, op, v: {k: {op: v}}, st.sampled_from(["k1", "k2", "tags"]),
              st.sampled_from(["$eq", "$ne"]), _values),
    st.builds(lambda k, op, v: {k: {op: v}}, st.sampled_from(["k1", "k2", "tags"]),
              st.sampled_from(["$in", "$nin"]), st.lists(st.one_of(st.sampled_from(["a", "b"]), st.integers(0, 3)),
                                                         min_size=1, max_size=3)),
    st.builds(lambda k, op, v: {k: {op: v}}, st.sampled_from(["k1", "k2"]),
              st.sampled_from(["$gt", "$gte", "$lt", "$lte"]), st.integers(0, 3)),
    st.builds(lambda k, v: {k: {"$exists": v}}, st.sampled_from(["k1", "k2", "tags"]), st.booleans()),
)
_filter = st.recursive(_leaf, lambda inner: st.one_of(
    st.builds(lambda xs: {"$and": xs}, st.lists(inner, min_size=1, max_size=3)),
    st.builds(lambda xs: {"$or": xs}, st.lists(inner, min_size=1, max_size=3))), max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(st.lists(_record, min_size=1, max_size=25), _filter)
def test_vectorised_mask_equals_reference_evaluation(records: list[dict], flt: dict) -> None:
    validate_filter(flt)
    index = MetadataIndex(records)
    expected = [matches(flt, r) for r in records]
    assert index.mask(flt).tolist() == expected


def test_metadata_index_round_trips_through_disk(tmp_path) -> None:
    index = MetadataIndex(RECORDS)
    index.save(str(tmp_path / "m.npz"))
    loaded = MetadataIndex.load(str(tmp_path / "m.npz"))
    for flt in ({"tags": "loan"}, {"year": {"$gte": 2021}}, {"record_keeper": {"$nin": ["Acme"]}}):
        assert loaded.mask(flt).tolist() == index.mask(flt).tolist()
    assert loaded.values("record_keeper") == ["Acme", "Summit"]
