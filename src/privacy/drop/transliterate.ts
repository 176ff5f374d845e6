/**
 * Name folding for DROP: "transliterate supported Greek and Cyrillic characters, fold supported Latin
 * characters to plain ASCII where possible" (Working with the data, Hashing). The specification does not
 * publish its character tables; these are ours (SOURCES.md, "Names"): Greek after ISO 843 without
 * diacritics, Cyrillic after the common Russian passport-style romanization plus the Ukrainian,
 * Belarusian, Serbian and Macedonian letters, Latin letters NFD cannot decompose mapped by hand.
 * Everything else (CJK, Arabic, Hebrew, …) is left as it is.
 */

const GREEK: Record<string, string> = {
  α: 'a',
  β: 'v',
  γ: 'g',
  δ: 'd',
  ε: 'e',
  ζ: 'z',
  η: 'i',
  θ: 'th',
  ι: 'i',
  κ: 'k',
  λ: 'l',
  μ: 'm',
  ν: 'n',
  ξ: 'x',
  ο: 'o',
  π: 'p',
  ρ: 'r',
  σ: 's',
  ς: 's',
  τ: 't',
  υ: 'y',
  φ: 'f',
  χ: 'ch',
  ψ: 'ps',
  ω: 'o',
};

const CYRILLIC: Record<string, string> = {
  а: 'a',
  б: 'b',
  в: 'v',
  г: 'g',
  д: 'd',
  е: 'e',
  ё: 'yo',
  ж: 'zh',
  з: 'z',
  и: 'i',
  й: 'y',
  к: 'k',
  л: 'l',
  м: 'm',
  н: 'n',
  о: 'o',
  п: 'p',
  р: 'r',
  с: 's',
  т: 't',
  у: 'u',
  ф: 'f',
  х: 'kh',
  ц: 'ts',
  ч: 'ch',
  ш: 'sh',
  щ: 'shch',
  ъ: '',
  ы: 'y',
  ь: '',
  э: 'e',
  ю: 'yu',
  я: 'ya',
  // Ukrainian, Belarusian
  є: 'ye',
  і: 'i',
  ї: 'yi',
  ґ: 'g',
  ў: 'u',
  // Serbian, Macedonian
  ђ: 'dj',
  ј: 'j',
  љ: 'lj',
  њ: 'nj',
  ћ: 'c',
  џ: 'dz',
  ѓ: 'gj',
  ќ: 'kj',
  ѕ: 'dz',
};

/** Latin letters without a canonical decomposition, so NFD leaves them whole. */
const LATIN: Record<string, string> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ł: 'l',
  ı: 'i',
  ħ: 'h',
  ŋ: 'n',
  ŧ: 't',
  ƒ: 'f',
  ĸ: 'k',
};

const COMBINING_MARK = /\p{M}/u;
const LATIN_SCRIPT = /\p{Script=Latin}/u;

/** Greek and Cyrillic to Latin letters, and the Latin letters above to ASCII; `text` is lower case. */
export function transliterate(text: string): string {
  let out = '';
  for (const ch of text) {
    const mapped = CYRILLIC[ch] ?? LATIN[ch] ?? GREEK[ch] ?? GREEK[ch.normalize('NFD').charAt(0)];
    out += mapped ?? ch;
  }
  return out;
}

/** Drops the accents of Latin letters (é → e) and leaves marks on other scripts' letters alone. */
export function stripLatinAccents(text: string): string {
  let out = '';
  let afterLatin = false;
  for (const ch of text.normalize('NFD')) {
    if (COMBINING_MARK.test(ch)) {
      if (!afterLatin) out += ch;
      continue;
    }
    afterLatin = LATIN_SCRIPT.test(ch);
    out += ch;
  }
  return out.normalize('NFC');
}
