"""Answer generators behind one interface: `extractive` (offline default) and `openai` (any
OpenAI-compatible chat endpoint through langchain-openai)."""
