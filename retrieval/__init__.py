"""Retrieval engine: BM25 and dense branches under one filter language, fused, reranked."""
