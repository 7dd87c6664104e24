/**
 * The model's tokenizer and chat template: tokenizer.json + tokenizer_config.json read by
 * tokenizers.js (@huggingface/tokenizers), the config's chat_template rendered by
 * @huggingface/jinja (both vendored by make setup into ./vendor/).
 */
import {Tokenizer} from './vendor/tokenizers.mjs';
import {Template} from './vendor/jinja.mjs';

/** Fetch `url` as JSON, with the URL in the error. */
async function fetchJson(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status}`);
  return response.json();
}

export class ChatTokenizer {
  /**
   * @param {string} baseUrl the model folder holding tokenizer.json and tokenizer_config.json
   * @returns {Promise<ChatTokenizer>}
   */
  static async load(baseUrl) {
    const base = baseUrl.endsWith('/') ? baseUrl : baseUrl + '/';
    const [json, config] = await Promise.all([fetchJson(base + 'tokenizer.json'), fetchJson(base + 'tokenizer_config.json')]);
    return new ChatTokenizer(json, config);
  }

  /**
   * @param {object} json tokenizer.json
   * @param {object} config tokenizer_config.json (chat_template, bos_token, eos_token, add_bos_token)
   */
  constructor(json, config) {
    this.tokenizer = new Tokenizer(json, config);
    this.config = config;
    this.template = typeof config.chat_template === 'string' ? new Template(config.chat_template) : null;
    this.bosId = this.tokenId(config.bos_token);
    this.eosId = this.tokenId(config.eos_token);
    /** ids that end a reply: the eos token and the token the template closes each message with */
    this.stopIds = [...new Set([this.eosId, this.tokenId(this.#messageEnd())].filter((id) => id !== undefined))];
  }

  /** The id of one token's text (an added token or a vocabulary entry), else undefined. */
  tokenId(text) {
    if (typeof text !== 'string' || !text) return undefined;
    const {ids} = this.tokenizer.encode(text, {add_special_tokens: false});
    return ids.length === 1 ? ids[0] : undefined;
  }

  /** The special token the template writes right after a message's content (ChatML: <|im_end|>). */
  #messageEnd() {
    if (!this.template) return undefined;
    const marker = '\u2063content\u2063';
    const text = this.template.render({messages: [{role: 'user', content: marker}], add_generation_prompt: false,
      bos_token: this.config.bos_token ?? '', eos_token: this.config.eos_token ?? ''});
    const after = text.slice(text.indexOf(marker) + marker.length);
    return this.tokenizer.special_tokens.find((token) => after.startsWith(token));
  }

  /**
   * The chat template applied to `messages` ({role, content}), ending with the assistant's turn.
   * @returns {string}
   */
  applyChatTemplate(messages, {addGenerationPrompt = true} = {}) {
    if (!this.template) throw new TypeError('the tokenizer_config.json has no chat_template');
    return this.template.render({messages, add_generation_prompt: addGenerationPrompt,
      bos_token: this.config.bos_token ?? '', eos_token: this.config.eos_token ?? ''});
  }

  /** Token ids of `text` (special tokens written in it are recognised; a BOS is added if the config asks and the text lacks it). */
  encode(text) {
    const {ids} = this.tokenizer.encode(text, {add_special_tokens: false});
    if (this.config.add_bos_token && this.bosId !== undefined && ids[0] !== this.bosId) ids.unshift(this.bosId);
    return ids;
  }

  /** The text of `ids` (special tokens kept unless skipSpecialTokens). */
  decode(ids, {skipSpecialTokens = false} = {}) {
    if (ids.length === 0) return '';
    return this.tokenizer.decode(ids, {skip_special_tokens: skipSpecialTokens, clean_up_tokenization_spaces: false});
  }
}

/**
 * Text of a growing token list, piece by piece: byte-level tokens may end inside a UTF-8
 * character, so the text is decoded whole and the new part is held back while it ends in an
 * incomplete character (U+FFFD).
 */
export class TextStream {
  #ids = []; #sent = '';

  constructor(tokenizer, {skipSpecialTokens = true} = {}) {
    this.tokenizer = tokenizer;
    this.skipSpecialTokens = skipSpecialTokens;
  }

  /** Adds a token; returns the text that became complete (possibly ''). */
  push(id) {
    this.#ids.push(id);
    const text = this.tokenizer.decode(this.#ids, {skipSpecialTokens: this.skipSpecialTokens});
    if (text.endsWith('\uFFFD') || !text.startsWith(this.#sent)) return '';
    const piece = text.slice(this.#sent.length);
    this.#sent = text;
    return piece;
  }

  /** The whole text so far, incomplete characters included. */
  get text() { return this.tokenizer.decode(this.#ids, {skipSpecialTokens: this.skipSpecialTokens}); }
}
