"""A GGUF's GPT-2-style BPE vocabulary -> Hugging Face ``tokenizer.json`` + ``tokenizer_config.json``
(what the ``tokenizers`` package and transformers.js load), for tools/gguf_convert.py.

* the BPE model: the GGUF's ``tokenizer.ggml.tokens`` (byte-level strings, id = index) and
  ``tokenizer.ggml.merges``;
* added tokens: the GGUF's CONTROL tokens (type 3) as special, USER_DEFINED (type 4) as plain;
* the pre-tokenizer of llama.cpp's pre-tokenizer type: ``smollm`` splits digits one by one and
  then applies GPT-2's byte-level regex (as SmolLM2's own tokenizer.json does); ``gpt2`` the regex
  only;
* ``tokenizer_config.json``: the chat template, bos/eos/pad/unk by the GGUF's ids.
"""

from __future__ import annotations

import json
from pathlib import Path

CONTROL, USER_DEFINED = 3, 4
BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
PRE_TOKENIZERS = {
    "gpt2": BYTE_LEVEL,
    "smollm": {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": True}, BYTE_LEVEL]},
}


def _get(reader, key, default=None):
    f = reader.fields.get(key)
    return default if f is None else f.contents()


def tokenizer_files(reader) -> tuple[dict, dict]:
    """(tokenizer.json, tokenizer_config.json) as dicts, from a GGUFReader."""
    model = _get(reader, "tokenizer.ggml.model")
    if model != "gpt2":
        raise ValueError(f"only GPT-2-style BPE vocabularies convert; this GGUF's is {model!r}")
    pre = _get(reader, "tokenizer.ggml.pre", "gpt2")
    if pre not in PRE_TOKENIZERS:
        raise ValueError(f"the pre-tokenizer {pre!r} is not known here (known: {sorted(PRE_TOKENIZERS)})")
    tokens = _get(reader, "tokenizer.ggml.tokens")
    types = _get(reader, "tokenizer.ggml.token_type") or [1] * len(tokens)
    merges = _get(reader, "tokenizer.ggml.merges")
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": ty == CONTROL}
             for i, (t, ty) in enumerate(zip(tokens, types)) if ty in (CONTROL, USER_DEFINED)]
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
        "pre_tokenizer": PRE_TOKENIZERS[pre],
        "post_processor": {**BYTE_LEVEL, "trim_offsets": False},
        "decoder": BYTE_LEVEL,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": {t: i for i, t in enumerate(tokens)}, "merges": list(merges)},
    }
    name = lambda key: None if _get(reader, key) is None else tokens[int(_get(reader, key))]  # noqa: E731
    config = {
        "tokenizer_class": "GPT2Tokenizer",
        "add_bos_token": bool(_get(reader, "tokenizer.ggml.add_bos_token", False)),
        "add_prefix_space": False,
        "clean_up_tokenization_spaces": False,
        "bos_token": name("tokenizer.ggml.bos_token_id"),
        "eos_token": name("tokenizer.ggml.eos_token_id"),
        "pad_token": name("tokenizer.ggml.padding_token_id"),
        "unk_token": name("tokenizer.ggml.unknown_token_id"),
        "model_max_length": int(_get(reader, f"{_get(reader, 'general.architecture')}.context_length", 2048)),
        "chat_template": _get(reader, "tokenizer.chat_template"),
    }
    return tokenizer, config


def write_tokenizer(reader, folder: Path) -> None:
    tokenizer, config = tokenizer_files(reader)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer, ensure_ascii=False), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False, indent=1) + "\n",
                                                  encoding="utf-8")
