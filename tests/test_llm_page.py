"""The text-generation page (static/demos/text-generation/) on a tiny random decoder, against
onnxruntime and Hugging Face's tokenizers.

The tiny decoder of tools/llm_model.py (8-bit, vocabulary 300) gets a 300-id byte-level BPE
tokenizer with a ChatML template (tools/gguf_tokenizer.tiny_files), written into
server/models/generated/llm-page-tiny/. The page's chat turn must: encode the templated prompt to
the ids the Rust ``tokenizers`` package gives (rendered with Jinja2), and generate onnxruntime's
greedy tokens (tools/llm_reference.OrtDecoder) on WebGPU and on the CPU context. On the loaded page,
the generation loop (generate.js) must reproduce seeded sampling, differ from greedy with it, end
at a stop token; the sampler (sampler.js) must equal its NumPy mirror draw for draw. A second
chat turn must keep the cache rows it shares with the first (decoder.js extend) and still generate
onnxruntime's greedy tokens on the whole conversation, as a full prefill does; an edited
conversation keeps only the shared prefix; the decoder's record of the cached ids follows what
was fed. A missing model shows the `make llm` message. SmolLM2 runs only where `make llm` has
converted it.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import jinja2
import numpy as np
import pytest

from tools.gguf_tokenizer import tiny_files, write_files
from tools.llm_model import write_tiny
from tools.llm_reference import OrtDecoder

REPO = Path(__file__).resolve().parent.parent
GENERATED = REPO / "server" / "models" / "generated"
TINY = "llm-page-tiny"
SMOLLM = GENERATED / "smollm2-135m"
CTX = 32
NEW_TOKENS = 16
PROMPT = "Hello world, the"
PAGE = f"/demos/text-generation/?model={TINY}&ctx={CTX}"
_READY = "() => window.demoStatus && !['loading'].includes(window.demoStatus.state)"


def chat_ids(folder: Path, messages: list[dict]) -> tuple[str, list[int]]:
    """The chat template rendered by Jinja2 (as transformers does) and its ids by ``tokenizers``."""
    from tokenizers import Tokenizer

    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    text = env.from_string(config["chat_template"]).render(messages=messages, add_generation_prompt=True,
                                                           bos_token=config["bos_token"], eos_token=config["eos_token"])
    return text, Tokenizer.from_file(str(folder / "tokenizer.json")).encode(text).ids


@pytest.fixture(scope="module")
def tiny() -> dict:
    folder = GENERATED / TINY
    write_tiny(folder, bits=8)
    write_files(tiny_files(), folder)
    _, ids = chat_ids(folder, [{"role": "user", "content": PROMPT}])
    greedy = OrtDecoder(folder, CTX).generate(ids, NEW_TOKENS, stop={2})
    # a varied continuation of the full length (no <|im_end|>), so that equality means something
    assert len(greedy) == NEW_TOKENS and 2 not in greedy and len(set(greedy)) > 6, greedy
    return {"folder": folder, "ids": ids, "greedy": greedy}


def chat_turn(page, prompt: str, new_tokens: int) -> dict:
    """Types a prompt on the loaded page, generates greedily, returns window.lastGeneration."""
    page.fill("#prompt", prompt)
    page.fill("#max-new-tokens", str(new_tokens))
    page.fill("#temperature", "0")
    page.click("#generate")
    page.wait_for_function("() => window.lastGeneration && window.demoStatus.state === 'ready'")
    return page.evaluate("() => window.lastGeneration")


def open_page(page, url: str) -> None:
    page.goto(url)
    page.wait_for_function(_READY)
    status = page.evaluate("() => window.demoStatus")
    assert status["state"] == "ready", status


def check_reply(page, tiny: dict, device: str) -> dict:
    from tokenizers import Tokenizer

    got = chat_turn(page, PROMPT, NEW_TOKENS)
    assert got["promptIds"] == tiny["ids"]
    assert got["tokens"] == tiny["greedy"]
    assert got["stopped"] == "length" and got["deviceType"] == device
    text = Tokenizer.from_file(str(tiny["folder"] / "tokenizer.json")).decode(tiny["greedy"], skip_special_tokens=True)
    assert got["text"] == text
    assert page.locator("#conversation .message.assistant .text").last.text_content() == text
    timings = got["timings"]
    assert timings["promptTokens"] == len(tiny["ids"]) and timings["newTokens"] == NEW_TOKENS
    assert 0 < timings["prefillMs"] <= timings["firstTokenMs"] < timings["totalMs"]
    assert timings["decodeTokensPerSecond"] > 0 and timings["prefillTokensPerSecond"] > 0
    assert "tokens/s" in page.text_content("#decode-rate")
    return got


# the page's modules, run on its loaded decoder and tokenizer
_LOOP_JS = """async ({greedy, ids, messages}) => {
  const {generate} = await import('/demos/text-generation/generate.js');
  const {createSampler} = await import('/demos/text-generation/sampler.js');
  const {decoder, tokenizer} = window.textGeneration;
  const sampled = async (seed) => (await generate(decoder, ids,
    {maxNewTokens: greedy.length, sample: createSampler({temperature: 1.5, topK: 50, seed})})).tokens;
  const stopAt = greedy[5];
  const stop = await generate(decoder, ids, {maxNewTokens: greedy.length, stopIds: [stopAt]});
  const text = tokenizer.applyChatTemplate(messages);
  const encoded = tokenizer.encode(text);
  return {a: await sampled(7), b: await sampled(7), c: await sampled(8), stop, stopAt,
          text, encoded, decoded: tokenizer.decode(encoded), stopIds: tokenizer.stopIds};
}"""


def test_page_generates_onnxruntime_greedy_tokens_on_webgpu(webnn_page, tiny):
    page = webnn_page
    open_page(page, PAGE + "&device=gpu")
    assert "WebGPU" in page.text_content("#adapter")
    assert page.input_value("#context-length") == str(CTX)
    check_reply(page, tiny, "gpu")

    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "héllo 日本 123, the world"},
                {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "and?"}]
    out = page.evaluate(_LOOP_JS, {"greedy": tiny["greedy"], "ids": tiny["ids"], "messages": messages})
    # seeded sampling: the same seed gives the same tokens, another seed and greedy others
    assert out["a"] == out["b"] and out["a"] != tiny["greedy"] and out["a"] != out["c"]
    # a stop token ends the reply right after its first occurrence
    first = tiny["greedy"].index(out["stopAt"])
    assert out["stop"]["tokens"] == tiny["greedy"][:first + 1] and out["stop"]["stopped"] == "stop"
    # the chat template and tokenizer equal Jinja2's and the Rust tokenizers', and decode back
    text, ids = chat_ids(tiny["folder"], messages)
    assert out["text"] == text and out["encoded"] == ids and out["decoded"] == text
    assert out["stopIds"] == [2]  # eos <|im_end|>, which is also the template's end of a message


def test_page_generates_onnxruntime_greedy_tokens_on_the_cpu_context(webnn_page, tiny):
    page = webnn_page
    open_page(page, PAGE + "&device=cpu")
    assert "CPU context" in page.text_content("#adapter")
    check_reply(page, tiny, "cpu")


CHAT_CTX = 64
FIRST_REPLY = 6
SECOND = "and then?"
SECOND_REPLY = 8
EDITED = "Jello world, the"


def shared_prefix(cached: list[int], ids: list[int]) -> int:
    """The cache rows a prompt can keep: the common prefix, short of the prompt's last id."""
    n = 0
    while n < min(len(cached), len(ids) - 1) and cached[n] == ids[n]:
        n += 1
    return n


# the decoder's record of its cached ids after prefill and steps, and the cost choice's rule
_RECORD_JS = """async ({prompt}) => {
  const {cheaperPath, STEPS_PRIOR} = await import('/demos/text-generation/decoder.js');
  const d = window.textGeneration.decoder;
  const n = prompt.length;
  const out = {};
  await d.prefill(prompt);
  out.prefill = d.cachedIds;
  await d.step(7, n);
  await d.step(9, n + 1);
  out.steps = d.cachedIds;
  await d.step(5, n + 1);  // row n + 1 again: the record's token there changes
  out.again = d.cachedIds;
  await d.step(4, n + 5);  // past the recorded rows: the record stays
  out.beyond = d.cachedIds;
  d.sessions.decode.run = () => Promise.reject(new Error('failed run'));
  try { await d.step(3, n + 2); } catch (error) { out.failure = error.message; } finally { delete d.sessions.decode.run; }
  out.afterFailure = d.cachedIds;
  const reused = await d.extend(prompt, {reuse: 'always'});
  out.extended = {ids: d.cachedIds, reusedTokens: reused.reusedTokens, mode: reused.mode};
  const again = await d.extend(prompt, {reuse: 'always'});
  out.extendedAgain = {ids: d.cachedIds, reusedTokens: again.reusedTokens, mode: again.mode};
  out.errors = [];
  for (const [ids, options] of [[[], {}], [prompt, {reuse: 'sometimes'}]]) {
    try { await d.extend(ids, options); } catch (error) { out.errors.push(error.name); }
  }
  out.costs = d.costs;
  out.choices = [cheaperPath(STEPS_PRIOR, null, 100), cheaperPath(STEPS_PRIOR + 1, 1, null),
                 cheaperPath(10, 5, 50), cheaperPath(11, 5, 50)];
  return out;
}"""

_GENERATE_JS = """async ({ids, n, reuse}) => {
  const {generate} = await import('/demos/text-generation/generate.js');
  const {decoder} = window.textGeneration;
  const result = await generate(decoder, ids, {maxNewTokens: n, stopIds: [2], reuse});
  return {tokens: result.tokens, timings: result.timings, cached: decoder.cachedIds};
}"""


@pytest.mark.parametrize("context_device", ["gpu", "cpu"])
def test_second_turn_reuses_the_cache_and_answers_as_onnxruntime(webnn_page, tiny, context_device):
    page = webnn_page
    folder = tiny["folder"]
    reference = OrtDecoder(folder, CHAT_CTX)
    open_page(page, f"/demos/text-generation/?model={TINY}&ctx={CHAT_CTX}&device={context_device}&reuse=always")
    first = chat_turn(page, PROMPT, FIRST_REPLY)
    assert first["tokens"] == reference.generate(tiny["ids"], FIRST_REPLY, stop={2})
    assert first["timings"]["reusedTokens"] == 0 and first["timings"]["promptMode"] == "prefill"
    cached = page.evaluate("() => window.textGeneration.decoder.cachedIds")
    # the prompt and the reply but its last token, which was sampled and never fed
    assert cached == tiny["ids"] + first["tokens"][:-1]

    # turn 2: the page renders the whole conversation, the first reply as its text
    _, ids = chat_ids(folder, [{"role": "user", "content": PROMPT}, {"role": "assistant", "content": first["text"]},
                               {"role": "user", "content": SECOND}])
    expected = reference.generate(ids, SECOND_REPLY, stop={2})
    second = chat_turn(page, SECOND, SECOND_REPLY)
    assert second["promptIds"] == ids
    assert second["tokens"] == expected
    reused = shared_prefix(cached, ids)
    assert reused >= len(tiny["ids"])
    assert second["timings"]["reusedTokens"] == reused and second["timings"]["promptMode"] == "steps"
    assert second["timings"]["prefillMs"] > 0 and second["timings"]["prefillTokensPerSecond"] > 0
    assert f"{reused} from the cache" in page.text_content("#prefill-rate")
    cached = page.evaluate("() => window.textGeneration.decoder.cachedIds")
    assert cached == ids + second["tokens"][:-1]

    # the same prompt again through a full prefill, then with everything but its last id cached
    never = page.evaluate(_GENERATE_JS, {"ids": ids, "n": SECOND_REPLY, "reuse": "never"})
    assert never["tokens"] == expected
    assert never["timings"]["reusedTokens"] == 0 and never["timings"]["promptMode"] == "prefill"
    again = page.evaluate(_GENERATE_JS, {"ids": ids, "n": SECOND_REPLY, "reuse": "always"})
    assert again["tokens"] == expected and again["timings"]["reusedTokens"] == len(ids) - 1
    auto = page.evaluate(_GENERATE_JS, {"ids": ids, "n": SECOND_REPLY, "reuse": "auto"})
    assert auto["tokens"] == expected
    assert auto["timings"]["reusedTokens"] == (len(ids) - 1 if auto["timings"]["promptMode"] == "steps" else 0)
    cached = auto["cached"]

    # a new conversation whose first message differs early keeps only the shared prefix
    page.click("#reset")
    edited_ids = chat_ids(folder, [{"role": "user", "content": EDITED}])[1]
    edited = chat_turn(page, EDITED, FIRST_REPLY)
    assert edited["promptIds"] == edited_ids
    assert edited["tokens"] == reference.generate(edited_ids, FIRST_REPLY, stop={2})
    reused = shared_prefix(cached, edited_ids)
    assert 0 < reused < len(tiny["ids"]) // 2
    assert edited["timings"]["reusedTokens"] == reused

    record = page.evaluate(_RECORD_JS, {"prompt": ids[:10]})
    prompt = ids[:10]
    assert record["prefill"] == prompt
    assert record["steps"] == prompt + [7, 9]
    assert record["again"] == prompt + [7, 5]
    assert record["beyond"] == prompt + [7, 5]
    assert record["failure"] == "failed run" and record["afterFailure"] == []
    assert record["extended"] == {"ids": prompt, "reusedTokens": 0, "mode": "prefill"}
    assert record["extendedAgain"] == {"ids": prompt, "reusedTokens": len(prompt) - 1, "mode": "steps"}
    assert record["errors"] == ["RangeError", "TypeError"]
    assert record["costs"]["stepMs"] > 0 and all(ms > 0 for ms in record["costs"]["prefillMs"].values())
    assert record["choices"] == ["steps", "prefill", "steps", "prefill"]


def _mulberry32(seed: int):
    a = seed & 0xFFFFFFFF
    m = 0xFFFFFFFF

    def imul(x: int, y: int) -> int:
        return (x * y) & m

    def draw() -> float:
        nonlocal a
        a = (a + 0x6D2B79F5) & m
        t = imul(a ^ (a >> 15), a | 1)
        t ^= (t + imul(t ^ (t >> 7), t | 61)) & m
        return ((t ^ (t >> 14)) & m) / 4294967296
    return draw


def test_sampler_equals_its_numpy_mirror(webnn_page, server_url):
    """mulberry32 and top-k sampling at a temperature, draw for draw (well-separated logits, so no
    draw sits on a boundary)."""
    rng = np.random.default_rng(3)
    logits = (rng.permutation(64) * 0.25).astype(np.float32)
    temperature, k, seed, n = 2.0, 10, 12345, 300
    draw = _mulberry32(seed)
    top = sorted(range(len(logits)), key=lambda i: (-logits[i], i))[:k]
    w = np.exp((logits[top].astype(np.float64) - logits[top[0]]) / temperature)
    cum = np.cumsum(w)
    expected = [top[min(int(np.searchsorted(cum, draw() * cum[-1], side="right")), k - 1)] for _ in range(n)]
    page = webnn_page
    page.goto(server_url + "/")  # any page of the server
    got = page.evaluate("""async ({logits, temperature, k, seed, n}) => {
      const {createSampler, mulberry32} = await import('/demos/text-generation/sampler.js');
      const sample = createSampler({temperature, topK: k, seed});
      const values = Float32Array.from(logits);
      const r = mulberry32(1);
      return {tokens: Array.from({length: n}, () => sample(values)), draws: [r(), r(), r()],
              greedy: createSampler({temperature: 0, seed})(values)};
    }""", {"logits": logits.tolist(), "temperature": temperature, "k": k, "seed": seed, "n": n})
    first = _mulberry32(1)
    assert got["draws"] == [first(), first(), first()]
    assert got["tokens"] == expected
    assert got["greedy"] == int(np.argmax(logits))
    assert len(set(expected)) > 5


def test_page_says_how_to_convert_a_missing_model(webnn_page):
    page = webnn_page
    page.goto("/demos/text-generation/?model=not-converted-yet")
    page.wait_for_function(_READY)
    assert page.evaluate("() => window.demoStatus.state") == "missing"
    assert page.is_visible("#missing")
    assert "make llm" in page.text_content("#missing")
    assert "not-converted-yet" in page.text_content("#missing")
    assert page.is_disabled("#generate")


@pytest.mark.parametrize("query, says", [("reuse=bogus", "auto, always or never"), ("device=npu", "gpu or cpu"),
                                         ("ctx=abc", "?ctx=abc: this model has contexts"), ("ctx=63", "this model has contexts")])
def test_page_names_a_mistyped_url_parameter(webnn_page, tiny, query, says):
    """A URL parameter out of its values (a context the converted model has no graph for included)
    is reported as such, with the values it takes: no model load, no console error, no `make llm`
    notice."""
    page = webnn_page
    page.goto(f"/demos/text-generation/?model={TINY}&{query}")
    page.wait_for_function(_READY)
    status = page.evaluate("() => window.demoStatus")
    assert status["state"] == "error" and status["error"].startswith("Check the page's address"), status
    assert says in status["error"], status
    assert page.is_disabled("#generate")


_SMOLLM_FILES = ("genai_config.json", "model.onnx.data", "model-256.onnx", "tokenizer.json", "tokenizer_config.json")


@pytest.mark.skipif(not all((SMOLLM / f).is_file() for f in _SMOLLM_FILES),
                    reason="SmolLM2 is not converted here (make llm; never part of make setup or CI)")
@pytest.mark.skipif(os.environ.get("WEBNN_SMOLLM_PAGE") != "1",
                    reason="SmolLM2 on the page takes minutes on SwiftShader: set WEBNN_SMOLLM_PAGE=1 to run it "
                           "(WEBNN_SMOLLM_TOKENS=N new tokens, default 10)")
@pytest.mark.parametrize("context_device", ["gpu", "cpu"])
def test_smollm2_answers_as_onnxruntime_does(webnn_page, context_device):
    page = webnn_page
    page.set_default_timeout(3_600_000)
    open_page(page, f"/demos/text-generation/?device={context_device}&ctx=256")
    prompt = "What is the capital of France?"
    new_tokens = int(os.environ.get("WEBNN_SMOLLM_TOKENS", "10"))
    text, ids = chat_ids(SMOLLM, [{"role": "user", "content": prompt}])
    expected = OrtDecoder(SMOLLM, 256).generate(ids, new_tokens, stop={2})
    got = chat_turn(page, prompt, new_tokens)
    assert got["promptIds"] == ids and text.startswith("<|im_start|>system\nYou are a helpful AI assistant")
    assert got["tokens"] == expected
    if new_tokens >= 6:
        assert "Paris" in got["text"]
