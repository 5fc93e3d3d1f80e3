"""Text utilities shared by the methods and the evaluation: whitespace normalisation,
punctuation counts and tokenisation.

Pure functions; the only cached value is an immutable lookup table.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from itertools import repeat

import numpy as np

__all__ = [
    "CJK_RE",
    "CONTROL_RE",
    "DATE_RE",
    "INVISIBLE_RE",
    "SENTENCE_CLOSERS",
    "SENTENCE_TERMINALS",
    "assemble_body",
    "drop_invisible",
    "ends_sentence",
    "count_cjk",
    "has_controls",
    "latin_length",
    "latin_lengths",
    "text_measures",
    "count_punctuation",
    "normalize_space",
    "paper_tokens",
    "punctuation_table",
    "word_tokens",
]


#: The characters that end a sentence in the scripts of the world's news: Unicode's
#: ``Sentence_Terminal`` property (UCD ``PropList.txt``, used by UAX #29's sentence
#: boundaries) for the scripts written today: ``. ! ?``; Armenian ``։``; Arabic ``؟ ؞ ۔``
#: (question mark, triple dot, the Urdu full stop); Syriac; N'Ko; the Devanagari danda and
#: double danda ``। ॥`` (Hindi, Marathi, Nepali, Bengali, Sanskrit …); Myanmar ``၊ ။``;
#: Ethiopic ``። ፧ ፨``; Canadian syllabics; Khmer ``។ ៕``; Mongolian; Limbu; the doubled
#: and mixed marks ``‼ ‽ ⁇ ⁈ ⁉``; the ideographic, full-width, half-width and small forms
#: ``。 ． ！ ？ ｡ ﹒ ﹖ ﹗``; Lisu, Vai and Bamum; plus the ellipsis ``…`` (not in the
#: property; a story's sentence may end on it). Thai and Lao write no sentence mark.
SENTENCE_TERMINALS = frozenset(
    ".!?…\u0589\u061d\u061e\u061f\u06d4\u0700\u0701\u0702\u07f9\u0964\u0965\u104a\u104b"
    "\u1362\u1367\u1368\u166e\u17d4\u17d5\u1803\u1809\u1944\u1945\u203c\u203d\u2047\u2048\u2049"
    "\u3002\ua4ff\ua60e\ua60f\ua6f3\ua6f7\ufe52\ufe56\ufe57\uff01\uff0e\uff1f\uff61"
)

#: What may follow a sentence's last mark and is read past: spaces, closing brackets and
#: the closing quotation marks of the world's quoting styles (English ``” ’``, German
#: ``“ ‘`` after ``„ ‚``, French and Russian ``» ›``, Chinese and Japanese ``」 』`` and
#: the full-width and half-width brackets).
SENTENCE_CLOSERS = "\"'”’“‘»›)] 」』）》〉】〕｣"


def ends_sentence(text: str, marks: frozenset[str] = SENTENCE_TERMINALS) -> bool:
    """Whether *text* ends a sentence: its last character that is not one of
    :data:`SENTENCE_CLOSERS` is one of *marks* (default :data:`SENTENCE_TERMINALS`).

    >>> [ends_sentence(t) for t in ("Power was cut.", "He said: “we will stay.”", "नई लाइन खुल गई।",
    ...                             "「ありがとうございました。」", "„Wir bleiben.“", "Home News", "")]
    [True, True, True, True, True, False, False]
    """
    return text.rstrip(SENTENCE_CLOSERS)[-1:] in marks


#: Control characters that are not whitespace to ``str.split`` (C0 but TAB, LF, VT, FF,
#: CR and the separators 0x1C–0x1F; DEL; C1 but NEL): a browser displays none of them, so
#: they are removed from every text, title and body.
CONTROL_RE = re.compile("[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f]")
_CONTROL_BYTES = bytes([*range(0x00, 0x09), *range(0x0E, 0x1C), 0x7F])
_C1_UTF8_RE = re.compile(rb"\xc2[\x80-\x84\x86-\x9f]")


def has_controls(text: str) -> bool:
    """Whether *text* holds a character of :data:`CONTROL_RE`, tested at C speed
    (``isprintable``, then a byte count on the UTF-8 form), so that the regex runs only
    on the rare texts that have one.

    >>> has_controls("caf\u00e9 \u00ad"), has_controls("a\x01b"), has_controls("a\x9fb")
    (False, True, True)
    """
    if text.isprintable():
        return False
    data = text.encode("utf-8", "surrogatepass")
    return len(data.translate(None, _CONTROL_BYTES)) != len(data) or _C1_UTF8_RE.search(data) is not None


def normalize_space(text: str) -> str:
    """Trim *text* and collapse every whitespace run to one space.

    This is how CEPR counts characters (spec §1, "Characters are counted on the trimmed
    text, whitespace runs collapsed").

    >>> normalize_space("  Breaking\\n\\t news  ")
    'Breaking news'
    >>> normalize_space("   ")
    ''
    """
    return " ".join(text.split())


_LAST_PUNCT_PLANE_END = 0x30000


@functools.cache
def punctuation_table() -> np.ndarray:
    """Boolean lookup table over the code points of Unicode planes 0–2: ``table[ord(c)]``
    is True iff ``c`` is in Unicode general category P* (Pc, Pd, Ps, Pe, Pi, Pf, Po).

    Shape ``(0x30000,)``, read-only, built once per process and cached.
    Planes 3 to 16 hold no punctuation (ideographs, tags, private use), so
    :func:`count_punctuation` clips higher code points to U+2FFFF, a noncharacter; the
    table stays small enough (192 KiB) for the CPU cache. The punctuation set is an
    [open] choice of spec §1: we take all of ``\\p{P}``, which covers the CJK marks
    ``，。；：？！、“”‘’`` as well as ASCII ``, . ; ' "``.

    >>> table = punctuation_table()
    >>> bool(table[ord("，")]), bool(table[ord(",")]), bool(table[ord("a")]), bool(table[-1])
    (True, True, False, False)
    """
    table = np.zeros(_LAST_PUNCT_PLANE_END, dtype=bool)
    category = unicodedata.category
    points = [c for c in range(_LAST_PUNCT_PLANE_END) if category(chr(c))[0] == "P"]
    table[points] = True
    table.flags.writeable = False
    return table


def count_punctuation(texts: Sequence[str], lengths: np.ndarray | None = None) -> np.ndarray:
    """Number of Unicode punctuation characters (category P*) in each of *texts*.

    Returns an int64 array of shape ``(len(texts),)``. Vectorised: the texts are joined,
    viewed as UTF-32 code points and looked up in :func:`punctuation_table`, so the cost
    is one pass in numpy whatever the number of texts. Empty strings count 0.
    *lengths*: the texts' lengths in characters, int64 ``(len(texts),)``, when the caller
    has them (``Page.char_counts``); counted here otherwise.

    >>> count_punctuation(["Hello, world.", "no marks", "你好，世界。", "\U0001F600!\U000E0041"]).tolist()
    [2, 0, 2, 1]
    """
    if not texts:
        return np.zeros(0, dtype=np.int64)
    if lengths is None:
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    codes = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32)
    if codes.size == 0:
        return np.zeros(len(texts), dtype=np.int64)
    marks = np.take(punctuation_table().view(np.uint8), codes, mode="clip")
    if lengths.all():  # one sum per text, in C
        starts = np.zeros(len(texts), dtype=np.int64)
        lengths[:-1].cumsum(out=starts[1:])
        return np.add.reduceat(marks, starts, dtype=np.int64)
    csum = np.zeros(codes.size + 1, dtype=np.int64)
    marks.cumsum(out=csum[1:])
    ends = lengths.cumsum()
    return csum[ends] - csum[ends - lengths]


#: A date as pages write it, in any script: the numbers of day, month and year close
#: together (``2008-03-20``, ``20.03.08``, ``2008年3月20日``), or a day and a year with a
#: word (a month name) between them (``March 20, 2008``, ``20 mars 2008``).
DATE_RE = re.compile(
    r"(?<!\d)(?:(?:19|20)\d\d[-/.年]\s?\d{1,2}[-/.月]\s?\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.](?:19|20)?\d\d"
    r"|\d{1,2}\D{1,16}?(?:199\d|20[0-4]\d)|(?:199\d|20[0-4]\d)\D{1,3}\d{1,2}\D{1,3}\d{1,2})(?!\d)"
)


# CJK ideographs, kana and hangul: each character is one token (spec §6, paper metric).
CJK_RE = re.compile(
    "[\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3190-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f]"
)
# The same characters as :data:`CJK_RE`, as sorted code-point bounds ``[first, end)`` of
# merged ranges (adjacent ones joined, so that a code point is inside exactly when an odd
# number of bounds is at or below it).
_CJK_BOUNDS = np.array(
    [0x2E80, 0x2FE0, 0x3040, 0x3130, 0x3190, 0x3200, 0x3400, 0x4DC0, 0x4E00, 0xA000, 0xAC00, 0xD7B0,
     0xF900, 0xFB00, 0x20000, 0x2FA20],
    dtype=np.uint32,
)


def count_cjk(text: str) -> int:
    """Number of characters of *text* that :data:`CJK_RE` matches
    (``len(CJK_RE.findall(text))``), counted over the UTF-32 code points with numpy: an
    ASCII text costs one test, another a few vector steps instead of the pattern's step
    per character.

    >>> count_cjk("Hello, world! 北京欢迎你"), count_cjk("Café “quoted”"), count_cjk("ひらがな 한국 \U00020001")
    (5, 0, 7)
    """
    if text.isascii():
        return 0
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    high = codes[codes >= _CJK_BOUNDS[0]]
    if not high.size:
        return 0
    return int(np.count_nonzero(_CJK_BOUNDS.searchsorted(high, side="right") & 1))


#: A character of a script that writes a syllable or a word with one character (Han
#: ideographs, kana, bopomofo, Hangul syllables: the characters of :data:`CJK_RE`)
#: counts as this many Latin characters: it carries about as much text as two to four
#: Latin letters (a Chinese word is one or two ideographs, "ひらがな" is *hiragana*,
#: "한국어" *hangugeo*; an English word is five or six letters and a space).
WIDE_CHAR_WEIGHT = 3
#: Latin characters per word, its space included (an English word averages about five
#: letters): the word count of text written without spaces is its length in Latin
#: characters over this.
LATIN_WORD_CHARS = 6

# Code points by how their script writes words (Unicode Scripts.txt blocks), as sorted
# range starts and a class per range up to the next start: 0 words separated by spaces,
# one character a letter (Latin, Greek, Cyrillic, Arabic, Devanagari …); 1 no spaces
# between words, a character a letter or a vowel sign (Thai, Lao, Tibetan, Myanmar,
# Khmer); 2 no spaces, a character a syllable or a word (Han, Hiragana, Katakana,
# Bopomofo: :data:`CJK_RE` but Hangul); 3 spaces, a character a syllable (Hangul
# syllables).
_SCRIPT_STARTS = np.array(
    [0, 0x0E00, 0x1000, 0x10A0, 0x1780, 0x1800, 0x19E0, 0x1A00, 0x2E80, 0x2FE0, 0x3040, 0x3130, 0x3190,
     0x3200, 0x3400, 0x4DC0, 0x4E00, 0xA000, 0xA9E0, 0xAA00, 0xAA60, 0xAA80, 0xAC00, 0xD7B0, 0xF900,
     0xFB00, 0x20000, 0x2FA20],
    dtype=np.uint32,
)
_SCRIPT_CLASS = np.array([0, 1, 1, 0, 1, 0, 1, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 1, 0, 1, 0, 3, 0, 2, 0, 2, 0],
                         dtype=np.int64)
# Per class: extra Latin characters per character, and Latin characters of text without
# spaces per character.
_EXTRA = np.array([0, 0, WIDE_CHAR_WEIGHT - 1, WIDE_CHAR_WEIGHT - 1], dtype=np.int64)
_UNSPACED = np.array([0, 1, WIDE_CHAR_WEIGHT, 0], dtype=np.int64)


def text_measures(texts: Sequence[str], lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lengths and word counts of *texts* read the same whatever the script: each a
    Latin-script text's with the same content.

    *lengths*: the texts' lengths in characters, int64 ``(N,)`` (``Page.char_counts``).
    Returns ``(latin, words)``: *latin* int64 ``(N,)``, the lengths in Latin characters
    (a character of :data:`CJK_RE` counts :data:`WIDE_CHAR_WEIGHT`, any other one 1; the
    same array as *lengths* when no text holds a wide character), and *words* float64
    ``(N,)``: the spaces plus one, plus, for the characters of the scripts that do not
    separate words by spaces (Han, Hiragana, Katakana, Bopomofo, Thai, Lao, Tibetan,
    Myanmar, Khmer: Unicode's script blocks), their Latin length over
    :data:`LATIN_WORD_CHARS`. Texts in ASCII cost one test; others one numpy pass over
    their code points (and a second one over the few at or above U+0E00).

    >>> latin, words = text_measures(["Vote on Monday", "投票结果", "ผลการลงคะแนน", "투표 결과"], np.array([14, 4, 12, 5]))
    >>> latin.tolist(), words.tolist()
    ([14, 12, 12, 13], [3.0, 3.0, 3.0, 2.0])
    """
    words = np.fromiter(map(str.count, texts, repeat(" ")), np.float64, len(texts)) + 1.0
    codes = _code_points(texts)
    if codes is None or codes.max() < _SCRIPT_STARTS[1]:
        return lengths, words
    extra, unspaced = _script_sums(codes, lengths)
    latin = lengths + extra if extra.any() else lengths
    return latin, words + unspaced / LATIN_WORD_CHARS


def latin_lengths(texts: Sequence[str], lengths: np.ndarray) -> np.ndarray:
    """The lengths of *texts* in Latin characters (:func:`text_measures`' first array):
    int64 ``(N,)``, *lengths* itself when no text holds a character of :data:`CJK_RE`.

    >>> latin_lengths(["Vote", "投票结果"], np.array([4, 4])).tolist()
    [4, 12]
    """
    codes = _code_points(texts)
    if codes is None or codes.max() < _CJK_BOUNDS[0]:
        return lengths
    extra, _ = _script_sums(codes, lengths)
    return lengths + extra if extra.any() else lengths


def latin_length(text: str) -> int:
    """The length of one string *text* in Latin characters (:func:`latin_lengths`).

    >>> latin_length("Vote"), latin_length("投票 results")
    (4, 14)
    """
    return len(text) + (WIDE_CHAR_WEIGHT - 1) * count_cjk(text)


def _code_points(texts: Sequence[str]) -> np.ndarray | None:
    """The code points of *texts* joined, uint32; None when they are all ASCII."""
    joined = "".join(texts)
    if joined.isascii():
        return None
    return np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _script_sums(codes: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per text (*lengths* int64 ``(N,)`` over the joined *codes*): the extra Latin
    characters of its wide characters (int64) and the Latin length of its characters of
    scripts without spaces (float64)."""
    high = np.flatnonzero(codes >= _SCRIPT_STARTS[1])
    cls = _SCRIPT_CLASS[_SCRIPT_STARTS.searchsorted(codes[high], side="right") - 1]
    owner = np.cumsum(lengths).searchsorted(high, side="right")  # the text of each
    n = lengths.size
    extra = np.bincount(owner, weights=_EXTRA[cls], minlength=n).astype(np.int64)
    return extra, np.bincount(owner, weights=_UNSPACED[cls], minlength=n)


_PAPER_TOKEN_RE = re.compile(CJK_RE.pattern + r"|[^\s" + CJK_RE.pattern[1:-1] + r"]+")
_WORD_RE = re.compile(r"\w+")


def paper_tokens(text: str) -> list[str]:
    """Tokens of the CEPR paper's metric (CEPR Eqs. 7–8, spec §6): whitespace-separated
    words for Latin scripts, and every CJK character as a token of its own.

    >>> paper_tokens("Hello, world! 北京欢迎你")
    ['Hello,', 'world!', '北', '京', '欢', '迎', '你']
    """
    return _PAPER_TOKEN_RE.findall(text)


def word_tokens(text: str) -> list[str]:
    """Tokens of the article-extraction-benchmark metric: the matches of ``\\w+`` (Unicode),
    spec §6.

    >>> word_tokens("It's 9:30, São Paulo.")
    ['It', 's', '9', '30', 'São', 'Paulo']
    """
    return _WORD_RE.findall(text)


def assemble_body(texts: Sequence[str], blocks: np.ndarray, keep: np.ndarray,
                  gap_before: np.ndarray | None = None) -> str:
    """Join the kept text nodes in document order, one line per display block (CEPR Fig. 8
    concatenates the content nodes), the blocks' lines joined with a newline.

    Within a block, two kept nodes are joined as a browser renders them (HTML, "The
    innerText getter"; CSS Text 3, §4.1.1: white space collapses to one space across
    inline element boundaries) by *gap_before* of the second: a newline after a ``<br>``
    (2), a space when white space separates them in the source (1), nothing otherwise
    (0: ``<b>Bold</b>, plain`` is ``Bold, plain``), except between two word characters
    outside Han, kana and hangul, which stay apart by a space (:func:`_words_apart`: the
    style sheet, which we do not read, may lay the two out as separate boxes) unless the
    first node is a drop cap (:func:`_initial_letter`: ``<span>T</span>here`` is
    ``There``). Two kept nodes with dropped nodes between them are apart by at least a
    space. Without *gap_before* every pair of one block is joined with a space.

    :param texts: N normalised strings.
    :param blocks: int ``(N,)`` display-block ids from the page model.
    :param keep: bool ``(N,)`` content mask.
    :param gap_before: int ``(N,)``: what separates node *i* from node *i - 1* in the
        source, 0, 1 or 2 as above (``Page.gap_before``); None for "a space".

    >>> assemble_body(["Hello", "world", "Next", "menu"], np.array([1, 1, 2, 3]), np.array([True, True, True, False]))
    'Hello world\\nNext'
    >>> assemble_body(["Bold", ", plain", "x", "y", "(z", ")"], np.array([1, 1, 1, 1, 1, 1]), np.ones(6, bool),
    ...               np.array([0, 0, 1, 2, 1, 0]))
    'Bold, plain x\\ny (z)'
    >>> assemble_body(["T", "here was", "News", "Sport"], np.array([1, 1, 2, 2]), np.ones(4, bool),
    ...               np.array([0, 0, 0, 0]))
    'There was\\nNews Sport'
    """
    idx = keep.nonzero()[0]
    if idx.size == 0:
        return ""
    kept_blocks = blocks[idx]
    breaks = ((kept_blocks[1:] != kept_blocks[:-1]).nonzero()[0] + 1).tolist()
    kept = list(map(texts.__getitem__, idx.tolist()))
    if gap_before is not None and idx.size > 1:
        # The widest gap from each kept node back to the one before (over the dropped
        # nodes between them too, at least a space when there are some).
        gaps = np.maximum.reduceat(gap_before[: idx[-1] + 1], idx[:-1] + 1)
        skipped = np.diff(idx) > 1
        gaps[skipped] = np.maximum(gaps[skipped], 1)
        gaps[kept_blocks[1:] != kept_blocks[:-1]] = 2
        if (gaps != 1).any():
            seps = ["", " ", "\n"]
            parts = [kept[0]]
            for prev, text, gap in zip(kept, kept[1:], gaps.tolist()):
                parts.append(" " if gap == 0 and _words_apart(prev[-1], text[0]) and not _initial_letter(prev, text)
                             else seps[gap])
                parts.append(text)
            return drop_invisible("".join(parts))
    # One line per run of kept nodes of one block: slices [start, end) of *kept*.
    lines = map(kept.__getitem__, map(slice, [0, *breaks], [*breaks, idx.size]))
    return drop_invisible("\n".join(map(" ".join, lines)))


def _words_apart(left: str, right: str) -> bool:
    """Whether two texts that abut in the source, *left* ending and *right* starting with
    these characters, are written apart by a space all the same: when both are word
    characters (``\\w``) outside the scripts written without spaces between words
    (:data:`CJK_RE`). Without the page's style sheet, such a boundary may be inside one
    word (``fish<b>ermen</b>``) or between two boxes that CSS lays out apart (menu links,
    count badges, flex items: ``<a>Home</a><a>News</a>``); the space keeps two words from
    merging into one. Next to punctuation or a symbol (``<b>harbour</b>,``, ``$<span>5
    </span>``) and inside Han, kana or hangul text the texts abut, as rendered.

    >>> _words_apart("p", "N"), _words_apart("r", ","), _words_apart("(", "s"), _words_apart("京", "欢")
    (True, False, False, False)
    """
    if not ((left.isalnum() or left == "_") and (right.isalnum() or right == "_")):
        return False
    return CJK_RE.match(left) is None or CJK_RE.match(right) is None


def _initial_letter(left: str, right: str) -> bool:
    """Whether the node *left*, abutting *right* in the source, is a drop cap (an initial
    letter: CSS Inline Layout 3, §7 "Initial Letters"; CSS 2.1, §5.12.2 ":first-letter"):
    one upper-case letter set in an element of its own before the rest of its word, a
    run of lower-case letters (``<span class=dropcap>T</span>here``, ``M<sup>me</sup>``).
    The word is read whole (``There``), as a reader does. A letter before a capital, a
    digit or an identifier (``A<b>B</b>``, ``Y<i>b116df</i>``) is not one.

    >>> _initial_letter("T", "here are"), _initial_letter("A", "Bc"), _initial_letter("Y", "b116df")
    (True, False, False)
    >>> _initial_letter("To", "day"), _initial_letter("É", "té,")
    (False, True)
    """
    if len(left) != 1 or not left.isupper():
        return False
    word = _WORD_RE.match(right)
    return word is not None and word.group().isalpha() and word.group().islower()


#: Characters that render nothing and leave their neighbours' rendering alone (Unicode
#: 15, §23.2 and §23.8): the soft hyphen (shown only where a line is hyphenated there),
#: the zero width space, the word joiner and the zero width no-break space (BOM). The
#: zero width joiner and non-joiner stay: they change how their neighbours are shaped.
INVISIBLE_RE = re.compile("[\u00ad\u200b\u2060\ufeff]")


def drop_invisible(body: str) -> str:
    """*body* (lines of normalised text) without :data:`INVISIBLE_RE` characters, as a
    reader sees it; a space left double or at a line's end by a removed node, and a line
    left empty, go too.

    >>> drop_invisible("so\u00adft\\nzero\u200bwidth \u200b end\\n\u2060")
    'soft\\nzerowidth end'
    """
    if INVISIBLE_RE.search(body) is None:
        return body
    lines = (" ".join(filter(None, line.split(" "))) for line in INVISIBLE_RE.sub("", body).split("\n"))
    return "\n".join(line for line in lines if line)
