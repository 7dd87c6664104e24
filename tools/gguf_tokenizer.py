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
    tokens = _get(reader, "tokenizer.ggml.tokens")
    name = lambda key: None if _get(reader, key) is None else tokens[int(_get(reader, key))]  # noqa: E731
    return bpe_files(tokens, _get(reader, "tokenizer.ggml.token_type") or [1] * len(tokens),
                     _get(reader, "tokenizer.ggml.merges"), _get(reader, "tokenizer.ggml.pre", "gpt2"),
                     chat_template=_get(reader, "tokenizer.chat_template"),
                     bos=name("tokenizer.ggml.bos_token_id"), eos=name("tokenizer.ggml.eos_token_id"),
                     pad=name("tokenizer.ggml.padding_token_id"), unk=name("tokenizer.ggml.unknown_token_id"),
                     add_bos=bool(_get(reader, "tokenizer.ggml.add_bos_token", False)),
                     max_length=int(_get(reader, f"{_get(reader, 'general.architecture')}.context_length", 2048)))


def bpe_files(tokens: list[str], types: list[int], merges: list[str], pre: str, *, chat_template: str | None,
              bos: str | None, eos: str | None, pad: str | None = None, unk: str | None = None,
              add_bos: bool = False, max_length: int = 2048) -> tuple[dict, dict]:
    """(tokenizer.json, tokenizer_config.json) of a byte-level BPE vocabulary: ``tokens`` (id = index,
    byte-level strings), their GGUF token types (CONTROL: special added token, USER_DEFINED: plain
    added token), ``merges`` ("a b" in rank order), a pre-tokenizer name of PRE_TOKENIZERS."""
    if pre not in PRE_TOKENIZERS:
        raise ValueError(f"the pre-tokenizer {pre!r} is not known here (known: {sorted(PRE_TOKENIZERS)})")
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
    config = {
        "tokenizer_class": "GPT2Tokenizer",
        "add_bos_token": add_bos,
        "add_prefix_space": False,
        "clean_up_tokenization_spaces": False,
        "bos_token": bos,
        "eos_token": eos,
        "pad_token": pad,
        "unk_token": unk,
        "model_max_length": max_length,
        "chat_template": chat_template,
    }
    return tokenizer, config


def byte_alphabet() -> list[str]:
    """GPT-2's byte-level alphabet: the string standing for each byte 0..255 (printable Latin-1
    characters stand for themselves, the others are moved to U+0100 on)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("\u00a1"), ord("\u00ac") + 1),
                 *range(ord("\u00ae"), ord("\u00ff") + 1)]
    moved = iter(range(256, 512))
    return [chr(b) if b in printable else chr(next(moved)) for b in range(256)]


#: ChatML, as SmolLM2's template but without its default system message
TINY_CHAT_TEMPLATE = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
                      "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
#: words whose left-to-right merges fill the tiny vocabulary after the bytes
_TINY_WORDS = ("user", "assistant", "system", "\u0120the", "\u0120Hello", "\u0120world", "\u0120and", "ing", "\u0120of",
               "\u0120to", "\u0120is", "\u0120in", "\u0120on")


def tiny_files(vocab: int = 300) -> tuple[dict, dict]:
    """(tokenizer.json, tokenizer_config.json) of a byte-level BPE tokenizer with exactly ``vocab``
    ids, for tools/llm_model.py's tiny decoders: <|endoftext|>, <|im_start|>, <|im_end|> (ids 0, 1,
    2, special; SmolLM2's ids), the 256 bytes, then merges of a few chat words, left to right."""
    tokens = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", *byte_alphabet()]
    merges = []
    for word in _TINY_WORDS:
        piece = word[0]
        for char in word[1:]:
            if len(tokens) == vocab:
                break
            if piece + char not in tokens:
                merges.append(f"{piece} {char}")
                tokens.append(piece + char)
            piece += char
    if len(tokens) != vocab:
        raise ValueError(f"the tiny tokenizer has {len(tokens)} ids; {vocab} asked for")
    types = [CONTROL] * 3 + [1] * (vocab - 3)
    return bpe_files(tokens, types, merges, "smollm", chat_template=TINY_CHAT_TEMPLATE,
                     bos="<|im_start|>", eos="<|im_end|>", pad="<|im_end|>", unk="<|endoftext|>")


def write_files(files: tuple[dict, dict], folder: Path) -> None:
    """Write (tokenizer.json, tokenizer_config.json) into ``folder``."""
    tokenizer, config = files
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer, ensure_ascii=False), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False, indent=1) + "\n",
                                                  encoding="utf-8")


def write_tokenizer(reader, folder: Path) -> None:
    write_files(tokenizer_files(reader), folder)
