"""Near-duplicate stories: the same story published twice is marked or dropped.

Two pages carry **the same story** when the word 3-shingles of their cleaned bodies
(``CEPR_BODY_FIELD``) have a Jaccard similarity of at least ``CEPR_DEDUP_THRESHOLD``:
``|A ∩ B| / |A ∪ B|`` over the sets of consecutive 3-word sequences, words being Unicode
``\\w+`` runs, lower-cased. The title, the URL and the page's boilerplate do not count;
an edited headline, a moved paragraph, an appended correction or another site template
around the same body keep the story; another story on the same topic does not share it.

The layers:

* pure functions (no state): :func:`shingles` (text -> set of shingles),
  :func:`shingle_hashes` (text -> their 32-bit hashes), :func:`signature` (text -> MinHash
  signature, a ``uint32`` array of :data:`NUM_PERM` values, datasketch's ``affine32``
  scheme, fixed :data:`SEED`), :func:`similarity`
  (two signatures -> estimated Jaccard) and :func:`jaccard` (exact, on shingle sets);
* the indexes: :class:`DedupIndex` (in memory, with datasketch's ``MinHashLSH``; persisted
  in a SQLite file of the state directory) and :class:`RedisDedupIndex` (the distributed
  mode: LSH band buckets in Redis, with an atomic insert-or-get);
* :class:`DedupPipeline`, the item pipeline that runs after
  :class:`~scrapy_cepr.pipelines.CEPRPipeline` (the add-on registers it when
  ``CEPR_DEDUP`` is not ``"off"``).

Only the **first** article of a story is indexed; a later page whose body matches it
(the LSH gives the candidates, the signatures' estimated Jaccard confirms them) is a
duplicate, and its ``duplicate_of`` field is the first article's URL (its
``canonical_url`` when it has one, else its ``url``). Of several matching stories the
earliest indexed wins. A URL is indexed once, with the body of its first export: the same
URL seen again is never a duplicate of itself.

Needs ``pip install "scrapy-cepr[dedup]"`` (datasketch ≥ 1.6 with the ``affine32`` scheme
of 2.0).
"""

from __future__ import annotations

import functools
import logging
import re
import sqlite3
import time
import zlib
from collections.abc import Iterable
from hashlib import blake2b
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from itemadapter import ItemAdapter
from scrapy.exceptions import DropItem, NotConfigured

try:
    from datasketch import MinHash, MinHashLSH
except ImportError as exc:  # the crawl stops at start (the add-on imports this module), naming the extra
    raise ImportError(f'scrapy_cepr.dedup needs datasketch ({exc}): pip install "scrapy-cepr[dedup]"') from exc

from .discovery import CANONICAL_FIELD
from .pagestore import try_set
from .settings import DEDUP_MODES, CEPRConfig

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = [
    "DEDUP_MODES",
    "DUPLICATE_FIELD",
    "NUM_PERM",
    "SEED",
    "SHINGLE_WORDS",
    "DedupIndex",
    "DedupPipeline",
    "RedisDedupIndex",
    "jaccard",
    "lsh_params",
    "shingle_hashes",
    "shingles",
    "signature",
    "similarity",
]

logger = logging.getLogger(__name__)

#: Words per shingle.
SHINGLE_WORDS = 3
#: MinHash permutations (signature length). The standard error of the estimated Jaccard
#: J is sqrt(J(1-J)/NUM_PERM): 0.044 at J = 0.5.
NUM_PERM = 128
#: Seed of the MinHash permutations: every crawler and run computes the same signatures.
SEED = 1
#: The datasketch permutation scheme (32-bit values, stored as ``uint32``).
SCHEME = "affine32"
#: Weights of false positives and false negatives in datasketch's choice of the LSH
#: bands (:func:`lsh_params`).
LSH_WEIGHTS = (0.1, 0.9)
#: The output field: the URL of the first article with the same story, or None.
DUPLICATE_FIELD = "duplicate_of"
#: The state file in ``CEPR_STATE_DIR``.
STATE_FILE = "dedup.sqlite"

_WORD = re.compile(r"\w+")
#: Odd 64-bit multipliers combining the word hashes of a shingle (:func:`shingle_hashes`).
_MULTIPLIERS = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9))
#: The permutations of every signature, computed once (read-only).
_PERMUTATIONS = MinHash(num_perm=NUM_PERM, seed=SEED, scheme=SCHEME).permutations
_PERMUTATIONS.setflags(write=False)


# -- the pure layer ------------------------------------------------------------------------

def shingles(text: str, k: int = SHINGLE_WORDS) -> set[bytes]:
    """The word *k*-shingles of *text*: every run of *k* consecutive words (Unicode
    ``\\w+``, lower-cased), joined by a space, UTF-8 encoded. A text of fewer than *k*
    (but at least one) words is one shingle; a text without words gives the empty set.

    :raises ValueError: *k* < 1.

    >>> sorted(shingles("The cat sat on the mat.", 3))
    [b'cat sat on', b'on the mat', b'sat on the', b'the cat sat']
    >>> shingles("Breaking news", 3), shingles(" -- ", 3)
    ({b'breaking news'}, set())
    """
    if k < 1:
        raise ValueError(f"k must be >= 1; got {k}")
    words = _WORD.findall(text.lower())
    if not words:
        return set()
    if len(words) < k:
        return {" ".join(words).encode("utf-8")}
    return {" ".join(words[i:i + k]).encode("utf-8") for i in range(len(words) - k + 1)}


def shingle_hashes(text: str, k: int = SHINGLE_WORDS) -> np.ndarray:
    """The 32-bit hashes of the word *k*-shingles of *text* (the same shingles as
    :func:`shingles`), unique and sorted: a ``uint32`` array. Each word is hashed once
    (CRC-32 of its UTF-8 bytes, :func:`zlib.crc32`); a shingle's hash is the words'
    hashes combined by a polynomial over 64 bits, folded to 32 (so a text of n words costs
    n CRCs and a few array operations, not n string joins and SHA-1s). Deterministic.

    :raises ValueError: *k* < 1.

    >>> shingle_hashes("The cat sat on the mat.").shape, shingle_hashes("Breaking news").shape
    ((4,), (1,))
    >>> bool((shingle_hashes("the CAT sat") == shingle_hashes("The cat, sat!")).all()), shingle_hashes("--").size
    (True, 0)
    """
    if k < 1:
        raise ValueError(f"k must be >= 1; got {k}")
    words = _WORD.findall(text.lower())
    if not words:
        return np.empty(0, dtype=np.uint32)
    ids = {w: zlib.crc32(w.encode("utf-8")) for w in set(words)}
    w = np.fromiter((ids[x] for x in words), dtype=np.uint64, count=len(words))
    n = max(len(words) - k + 1, 1)
    h = np.zeros(n, dtype=np.uint64)
    for j in range(min(k, len(words))):  # h = sum of w[i + j] * K_j mod 2^64
        h += w[j:j + n] * _MULTIPLIERS[j % len(_MULTIPLIERS)]
    return np.unique(((h >> np.uint64(32)) ^ (h & np.uint64(0xFFFFFFFF))).astype(np.uint32))


def signature(text: str) -> np.ndarray:
    """The MinHash signature of *text* (a body): datasketch's ``MinHash`` (scheme
    ``affine32``, seed :data:`SEED`, :data:`NUM_PERM` permutations) of its
    :func:`shingle_hashes`, a ``uint32`` array of :data:`NUM_PERM` values. Deterministic:
    the same text gives the same signature in every process.

    :raises ValueError: a text without words.

    >>> a = signature("The harbour wall fell into the sea on Sunday night")
    >>> a.dtype, a.shape, bool((a == signature("the HARBOUR wall fell into the sea, on Sunday night!")).all())
    (dtype('uint32'), (128,), True)
    """
    hashes = shingle_hashes(text)
    if not hashes.size:
        raise ValueError("no words to sign: a body without words has no story")
    m = MinHash(num_perm=NUM_PERM, permutations=_PERMUTATIONS, scheme=SCHEME, hashfunc=_identity)
    m.update_batch(hashes.tolist())
    return np.asarray(m.hashvalues, dtype=np.uint32)


def _identity(value: int) -> int:
    """The hash function of :func:`signature`'s MinHash: its inputs are hashes already."""
    return value


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    """The estimated Jaccard similarity of two signatures of :func:`signature`: the
    share of positions where they agree, in [0, 1].

    :raises ValueError: signatures of different lengths.

    >>> s = "Residents were told to keep away from the harbour while the council inspects the old wall"
    >>> similarity(signature(s), signature(s))
    1.0
    >>> similarity(signature(s), signature("Shares fell sharply in Tokyo after the central bank kept rates")) < 0.1
    True
    """
    if a.shape != b.shape:
        raise ValueError(f"signatures of different lengths: {a.shape} and {b.shape}")
    return float(np.count_nonzero(a == b)) / a.size


def jaccard(a: set[bytes], b: set[bytes]) -> float:
    """The exact Jaccard similarity ``|a ∩ b| / |a ∪ b|`` of two shingle sets (0.0 when both
    are empty).

    >>> jaccard(shingles("a b c d"), shingles("a b c e"))
    0.3333333333333333
    """
    union = len(a | b)
    return len(a & b) / union if union else 0.0


@functools.lru_cache(maxsize=64)
def lsh_params(threshold: float) -> tuple[int, int]:
    """The LSH bands *b* and rows per band *r* (b·r ≤ :data:`NUM_PERM`) that datasketch
    chooses for *threshold*, with false negatives weighted 0.9 and false positives 0.1
    (:data:`LSH_WEIGHTS`): a candidate that is not a duplicate costs one comparison of
    signatures, a missed candidate is a missed duplicate. At 0.5, 32 bands of 4 rows: a
    pair of Jaccard 0.5 is a candidate with probability 0.87, of 0.6 with 0.99 (equal
    weights, 25 x 5: 0.55 and 0.87). A numerical integration of 40 ms, hence cached (a pure
    function of *threshold*).

    >>> lsh_params(0.5)
    (32, 4)
    """
    lsh = MinHashLSH(threshold=threshold, num_perm=NUM_PERM, weights=LSH_WEIGHTS)
    return lsh.b, lsh.r


def _lsh(threshold: float) -> MinHashLSH:
    """An in-memory datasketch LSH over :data:`NUM_PERM` permutations, with the bands of
    :func:`lsh_params`."""
    return MinHashLSH(threshold=threshold, num_perm=NUM_PERM, params=lsh_params(threshold))


def _minhash(sig: np.ndarray) -> MinHash:
    return MinHash(num_perm=NUM_PERM, hashvalues=sig, permutations=_PERMUTATIONS, scheme=SCHEME)


def _check_threshold(threshold: float) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
        raise ValueError(f"CEPR_DEDUP_THRESHOLD must be a Jaccard similarity in (0, 1]; got {threshold!r}")
    return float(threshold)


# -- the indexes ---------------------------------------------------------------------------

class DedupIndex:
    """The first article of each story, in memory (datasketch ``MinHashLSH``), optionally
    persisted in the SQLite file *path* (``CEPR_STATE_DIR/dedup.sqlite``): the table
    ``stories(seq, url, signature)`` holds each first article's URL and its signature
    (:data:`NUM_PERM` ``uint32`` values, 512 bytes, little-endian), and the LSH is rebuilt
    from it when the index opens. No pickle. One crawler per file (another crawler's
    inserts are not seen until the next open); crawlers sharing a story index use
    :class:`RedisDedupIndex`.

    :param threshold: the Jaccard similarity from which two bodies are the same story.
    :raises ValueError: a bad *threshold*, or a file written with other signatures
        (another :data:`NUM_PERM`, :data:`SEED`, shingle length or scheme).

    >>> index = DedupIndex(0.5)
    >>> story = "The harbour wall, built in 1820, fell into the sea on Sunday night. Nobody was hurt."
    >>> index.find_or_add("http://a.example/wall", signature(story)) is None
    True
    >>> index.find_or_add("http://b.example/wall", signature(story + " Correction: it was built in 1821."))
    'http://a.example/wall'
    >>> index.find_or_add("http://a.example/wall", signature(story)) is None  # itself: not a duplicate
    True
    >>> len(index)
    1
    """

    def __init__(self, threshold: float, path: str | Path | None = None) -> None:
        self.threshold = _check_threshold(threshold)
        self.lsh = _lsh(self.threshold)
        #: url -> (seq, signature) of every indexed story.
        self.stories: dict[str, tuple[int, np.ndarray]] = {}
        self._last_seq = 0
        self.path = Path(path) if path is not None else None
        self.db: sqlite3.Connection | None = None
        if self.path is not None:
            self._open()

    def __len__(self) -> int:
        return len(self.stories)

    def _open(self) -> None:
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("CREATE TABLE IF NOT EXISTS stories (seq INTEGER PRIMARY KEY, url TEXT NOT NULL UNIQUE, "
                   "signature BLOB NOT NULL)")
        expected = _meta()
        found = dict(db.execute("SELECT key, value FROM meta"))
        if not found:
            db.executemany("INSERT INTO meta VALUES (?, ?)", sorted(expected.items()))
            db.commit()
        elif found != expected:
            db.close()
            raise ValueError(f"{self.path}: written with other signatures ({found}; this version uses {expected}); "
                             "use another CEPR_STATE_DIR or delete the file")
        with self.lsh.insertion_session() as session:
            for seq, url, blob in db.execute("SELECT seq, url, signature FROM stories ORDER BY seq"):
                sig = _from_bytes(blob)
                self.stories[url] = (seq, sig)
                self._last_seq = seq
                session.insert(url, _minhash(sig), check_duplication=False)
        self.db = db

    def find_or_add(self, url: str, sig: np.ndarray) -> str | None:
        """The URL of the earliest indexed story whose signature's estimated Jaccard
        with *sig* reaches the threshold, or None after indexing *url* as a new story's
        first article (an already indexed *url* is not indexed again)."""
        own = self.stories.get(url)
        if own is not None and similarity(own[1], sig) >= self.threshold:
            return None
        first = _earliest_match(sig, self.threshold, ((u, *self.stories[u]) for u in self.lsh.query(_minhash(sig))
                                                      if u != url))
        if first is not None or own is not None:
            return first
        seq = self._last_seq + 1 if self.db is None else self._store(url, sig)
        self._last_seq = seq
        self.stories[url] = (seq, sig)
        self.lsh.insert(url, _minhash(sig), check_duplication=False)
        return None

    def _store(self, url: str, sig: np.ndarray) -> int:
        assert self.db is not None
        with self.db:
            cursor = self.db.execute("INSERT INTO stories (url, signature) VALUES (?, ?)", (url, _to_bytes(sig)))
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def close(self) -> None:
        """Close the state file (every insert is already committed)."""
        if self.db is not None:
            self.db.close()
            self.db = None


#: Atomic insert-or-get of a new story in Redis. KEYS: the hashes URL -> seq, seq -> URL,
#: seq -> signature, the counter, then the b band hashes; ARGV: the URL, its signature,
#: then for each band the field of its bucket and the number of seqs the caller read there
#: (a bucket is the concatenation of its seqs, 8 hex digits each). If another crawler added
#: a story to one of these buckets since, nothing is written and ``{"changed", seqs in
#: each bucket, new seqs...}`` is returned for the caller to compare; if the URL is
#: already indexed, ``{"exists"}``; else the story is indexed (its seq appended to every
#: bucket) and ``{"added", seq}`` returned.
_CLAIM = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return {'exists'} end
local out, new, changed = {'changed'}, {}, false
for i = 5, #KEYS do
  local bucket = redis.call('HGET', KEYS[i], ARGV[2 * i - 7]) or ''
  local known, n = tonumber(ARGV[2 * i - 6]), #bucket / 8
  table.insert(out, n)
  if n > known then
    changed = true
    for j = known, n - 1 do table.insert(new, string.sub(bucket, 8 * j + 1, 8 * j + 8)) end
  end
end
if changed then
  for _, u in ipairs(new) do table.insert(out, u) end
  return out
end
local seq = redis.call('INCR', KEYS[4])
redis.call('HSET', KEYS[1], ARGV[1], seq)
redis.call('HSET', KEYS[2], seq, ARGV[1])
redis.call('HSET', KEYS[3], seq, ARGV[2])
local hex = string.format('%08x', seq)
for i = 5, #KEYS do
  local bucket = redis.call('HGET', KEYS[i], ARGV[2 * i - 7]) or ''
  redis.call('HSET', KEYS[i], ARGV[2 * i - 7], bucket .. hex)
end
return {'added', seq}
"""

#: Store the LSH parameters and signature format at first use; return what is stored.
_META = """
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('HSET', KEYS[1], unpack(ARGV)) end
return redis.call('HGETALL', KEYS[1])
"""


class RedisDedupIndex:
    """The first article of each story, shared in Redis by every crawler of a spider
    (the distributed mode). Keys, under *prefix* (``<spider>:dedup``): ``:seq`` (hash URL
    -> seq, the order of indexing), ``:url`` (hash seq -> URL), ``:sig`` (hash seq ->
    signature, 512 bytes), ``:next`` (the counter), ``:meta`` (the LSH bands and the
    signature format, fixed by the first crawler) and ``:b:<band>`` (a hash per LSH band:
    the band's 64-bit hash -> the seqs whose band hashes there, 8 hex digits each).

    A new story is indexed by one Lua script that first checks that no crawler added a
    story to its band lists since they were read (else it compares those and retries), so
    two crawlers never both index the same story as its first article.

    :param server: a redis-py client with ``decode_responses=False`` (scrapy-redis's
        default, ``REDIS_PARAMS``): signatures are binary.
    :raises ValueError: a bad *threshold*, or an index written with other signatures.
    """

    def __init__(self, server: Any, prefix: str, threshold: float) -> None:
        self.server = server
        self.threshold = _check_threshold(threshold)
        self.seq_key, self.url_key, self.sig_key, self.next_key = (f"{prefix}:{k}" for k in ("seq", "url", "sig", "next"))
        self.band_prefix = f"{prefix}:b"
        self._claim = server.register_script(_CLAIM)
        b, r = lsh_params(self.threshold)
        wanted = {**_meta(), "bands": str(b), "rows": str(r)}
        stored = {_text(k): _text(v) for k, v in _pairs(server.register_script(_META)(
            keys=[f"{prefix}:meta"], args=[x for kv in sorted(wanted.items()) for x in kv]))}
        if {k: stored.get(k) for k in _meta()} != _meta():
            raise ValueError(f"Redis {prefix}:meta was written with other signatures ({stored}); this version "
                             f"uses {_meta()}: delete the {prefix}:* keys")
        self.bands, self.rows = int(stored["bands"]), int(stored["rows"])
        if (self.bands, self.rows) != (b, r):
            logger.info("dedup: the Redis index uses %d bands of %d rows (set by the first crawler); "
                        "CEPR_DEDUP_THRESHOLD=%g alone would choose %d x %d", self.bands, self.rows,
                        self.threshold, b, r)

    def band_fields(self, sig: np.ndarray) -> list[str]:
        """The bucket of *sig* in each of the LSH's bands (a field of the band's hash)."""
        r, data = self.rows, _to_bytes(sig)
        return [blake2b(data[4 * i * r:4 * (i + 1) * r], digest_size=8).hexdigest() for i in range(self.bands)]

    def _own(self, url: str) -> tuple[int, np.ndarray] | None:
        seq = self.server.hget(self.seq_key, url)
        sig = self.server.hget(self.sig_key, seq) if seq is not None else None
        return None if sig is None else (int(seq), _from_bytes(sig))

    def find_or_add(self, url: str, sig: np.ndarray, attempts: int = 20) -> str | None:
        """As :meth:`DedupIndex.find_or_add`, atomic among crawlers.

        :raises RuntimeError: the band lists changed *attempts* times in a row while
            indexing (a pathological contention)."""
        fields = self.band_fields(sig)
        keys = [f"{self.band_prefix}:{i}" for i in range(self.bands)]
        pipe = self.server.pipeline(transaction=False)
        for key, field in zip(keys, fields):
            pipe.hget(key, field)
        pipe.hget(self.seq_key, url)
        *buckets, own_seq = pipe.execute()
        lists = [_seqs(bucket) for bucket in buckets]
        own = self._own(url) if own_seq is not None else None
        if own is not None and similarity(own[1], sig) >= self.threshold:
            return None
        seen: set[int] = set() if own is None else {own[0]}
        candidates = {q for members in lists for q in members}
        lengths = [len(members) for members in lists]
        for _ in range(attempts):
            first = self._earliest(candidates - seen, sig)
            if first is not None:
                return first
            seen |= candidates
            if own is not None:  # indexed with another body: not indexed again
                return None
            result = self._claim(keys=[self.seq_key, self.url_key, self.sig_key, self.next_key, *keys],
                                 args=[url, _to_bytes(sig), *(x for fl in zip(fields, lengths) for x in fl)])
            status = _text(result[0])
            if status == "added":
                return None
            if status == "exists":  # another crawler indexed this URL meanwhile
                own = self._own(url)
                if own is None or similarity(own[1], sig) >= self.threshold:
                    return None
                seen.add(own[0])
                candidates = set()
                continue
            n = len(keys)
            lengths = [int(x) for x in result[1:n + 1]]
            candidates = {int(_text(q), 16) for q in result[n + 1:]}
        raise RuntimeError(f"dedup: the Redis band lists of {url} kept changing ({attempts} attempts)")

    def _earliest(self, seqs: set[int], sig: np.ndarray) -> str | None:
        if not seqs:
            return None
        ordered = sorted(seqs)
        pipe = self.server.pipeline(transaction=False)
        pipe.hmget(self.sig_key, ordered)
        pipe.hmget(self.url_key, ordered)
        sigs, urls = pipe.execute()
        rows = [(_text(u), q, _from_bytes(s)) for q, s, u in zip(ordered, sigs, urls) if s is not None and u is not None]
        return _earliest_match(sig, self.threshold, rows)

    def close(self) -> None:
        """Nothing to close (the client belongs to the crawler)."""


def _earliest_match(sig: np.ndarray, threshold: float, rows: Iterable[tuple[str, int, np.ndarray]]) -> str | None:
    """Of *rows* ``(url, seq, signature)``, the URL with the lowest seq whose signature
    reaches *threshold* with *sig*; None if none does."""
    best: tuple[int, str] | None = None
    for url, seq, other in rows:
        if similarity(sig, other) >= threshold and (best is None or seq < best[0]):
            best = (seq, url)
    return None if best is None else best[1]


def _meta() -> dict[str, str]:
    """What makes two signatures comparable, as stored with an index."""
    return {"num_perm": str(NUM_PERM), "seed": str(SEED), "shingle_words": str(SHINGLE_WORDS), "scheme": SCHEME,
            "hash": "crc32-words-poly64", "words": _WORD.pattern, "lower": "1"}


def _to_bytes(sig: np.ndarray) -> bytes:
    return sig.astype("<u4").tobytes()


def _from_bytes(blob: bytes) -> np.ndarray:
    sig = np.frombuffer(blob, dtype="<u4").astype(np.uint32)
    if sig.size != NUM_PERM:
        raise ValueError(f"a stored signature has {sig.size} values, expected {NUM_PERM}")
    return sig


def _seqs(bucket: bytes | str | None) -> list[int]:
    """The seqs of a Redis bucket (8 hex digits each).

    >>> _seqs(b"0000000a000000ff"), _seqs(None)
    ([10, 255], [])
    """
    text = _text(bucket) if bucket is not None else ""
    return [int(text[i:i + 8], 16) for i in range(0, len(text), 8)]


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _pairs(flat: list[Any]) -> list[tuple[Any, Any]]:
    return list(zip(flat[::2], flat[1::2]))


# -- the pipeline --------------------------------------------------------------------------

def _distributed(settings: Any) -> bool:
    """Whether the crawl is distributed over Redis: its ``SCHEDULER`` is scrapy-redis's
    or :class:`scrapy_cepr.distributed.RecoveringScheduler`, or ``REDIS_URL`` is set."""
    scheduler = settings.get("SCHEDULER")
    path = scheduler if isinstance(scheduler, str) else f"{getattr(scheduler, '__module__', '')}."
    return path.startswith(("scrapy_redis.", "scrapy_cepr.distributed.")) or bool(settings.get("REDIS_URL"))


class DedupPipeline:
    """Mark (``CEPR_DEDUP="mark"``) or drop (``"drop"``) the items whose body repeats the
    story of an earlier item (see the module docstring for what counts as the same story).

    Runs after :class:`~scrapy_cepr.pipelines.CEPRPipeline` (the add-on places it at
    :data:`scrapy_cepr.addon.DEDUP_PRIORITY`, 200), on the cleaned body. Only items with a
    body, a URL and no ``CEPR_ERROR_FIELD`` value are compared (empty, failed, skipped and
    timed-out pages pass untouched, counted ``cepr/dedup/skipped``). It writes
    ``duplicate_of`` (:data:`DUPLICATE_FIELD`): the URL of the first article with the story
    (its ``canonical_url`` when the item has one, else ``CEPR_URL_FIELD``), or None; item
    classes without the field are compared and counted but not marked (one warning per
    class).

    The index of first articles: in Redis in the distributed mode (:func:`_distributed`,
    keys ``<spider>:dedup:*``, :class:`RedisDedupIndex`), else in
    ``CEPR_STATE_DIR/dedup.sqlite`` when ``CEPR_STATE_DIR`` is set (:class:`DedupIndex`), else
    in memory for this crawl only.

    Stats: ``cepr/duplicates`` (items found to repeat a story), ``cepr/dropped/duplicate``
    (``"drop"``), ``cepr/dedup/skipped``, ``cepr/dedup/stories`` (new stories indexed) and
    ``cepr/dedup_seconds`` (float: time spent signing and searching, to compare with
    ``cepr/extraction_seconds``).

    :raises NotConfigured: ``CEPR_DEDUP="off"`` or ``CEPR_ENABLED=False``.
    :raises ValueError: a bad ``CEPR_*`` setting (:class:`~scrapy_cepr.settings.CEPRConfig`).
    """

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.config = CEPRConfig.from_crawler(crawler)
        if not self.config.enabled or self.config.dedup == "off":
            raise NotConfigured("CEPR_DEDUP is 'off'" if self.config.enabled else "CEPR_ENABLED is False")
        self.threshold = _check_threshold(self.config.dedup_threshold)
        self.stats = crawler.stats
        self.index: DedupIndex | RedisDedupIndex | None = None
        self._warned_classes: set[type] = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DedupPipeline:
        """Scrapy's constructor hook: ``cls(crawler)``."""
        return cls(crawler)

    async def open_spider(self) -> None:
        """Open the index: Redis, the state file or memory (see the class docstring).

        :raises ValueError: an index written with other signatures.
        :raises scrapy_cepr.exceptions.RedisUnavailableError: Redis cannot be reached.
        """
        settings = self.crawler.settings
        spider = self.crawler.spider
        if _distributed(settings):
            from scrapy_redis.connection import get_redis_from_settings

            from .distributed import check_redis

            server = get_redis_from_settings(settings)
            check_redis(server)
            prefix = f"{spider.name if spider is not None else 'crawl'}:dedup"
            self.index = RedisDedupIndex(server, prefix, self.threshold)
            where = f"Redis ({prefix}:*)"
            if self.config.state_dir:
                logger.info("dedup: distributed mode, the story index is in Redis, not in CEPR_STATE_DIR")
        elif self.config.state_dir:
            path = Path(self.config.state_dir) / STATE_FILE
            self.index = DedupIndex(self.threshold, path)
            where = f"{path} ({len(self.index)} stories)"
        else:
            self.index = DedupIndex(self.threshold)
            where = "memory (this crawl only; set CEPR_STATE_DIR to keep it)"
        logger.info("dedup: CEPR_DEDUP=%r, Jaccard threshold %g, story index in %s", self.config.dedup,
                    self.threshold, where)

    async def close_spider(self) -> None:
        """Close the index."""
        if self.index is not None:
            self.index.close()
            self.index = None

    async def process_item(self, item: Any) -> Any:
        """Compare *item*'s body with the stories seen; return the item with
        ``duplicate_of`` set (the same object).

        :raises DropItem: ``CEPR_DEDUP="drop"`` and the item repeats a story.
        """
        c = self.config
        adapter = ItemAdapter(item)
        body = adapter.get(c.body_field)
        url = adapter.get(CANONICAL_FIELD) or adapter.get(c.url_field)
        if not isinstance(body, str) or adapter.get(c.error_field) or not isinstance(url, str) or not url:
            self.stats.inc_value("cepr/dedup/skipped")
            if DUPLICATE_FIELD not in adapter:
                try_set(adapter, DUPLICATE_FIELD, None)
            return item
        assert self.index is not None, "open_spider() was not called"
        started = time.perf_counter()
        try:
            sig = signature(body)
        except ValueError:  # a body without words
            self.stats.inc_value("cepr/dedup/skipped")
            try_set(adapter, DUPLICATE_FIELD, None)
            return item
        first = self.index.find_or_add(url, sig)
        self.stats.inc_value("cepr/dedup_seconds", time.perf_counter() - started, start=0.0)  # type: ignore[arg-type]
        if not try_set(adapter, DUPLICATE_FIELD, first) and type(item) not in self._warned_classes:
            self._warned_classes.add(type(item))
            cls = type(item)
            logger.warning("CEPR_DEDUP=%r: item class %s.%s has no field %r; its duplicates are counted "
                           "(cepr/duplicates)%s but not marked (declare the field to mark them)", c.dedup,
                           cls.__module__, cls.__qualname__, DUPLICATE_FIELD,
                           " and dropped" if c.dedup == "drop" else "")
        if first is None:
            self.stats.inc_value("cepr/dedup/stories")
            return item
        self.stats.inc_value("cepr/duplicates")
        logger.debug("dedup: %s repeats the story of %s", url, first)
        if c.dedup == "drop":
            self.stats.inc_value("cepr/dropped/duplicate")
            raise DropItem(f"CEPR: {url} repeats the story of {first}", log_level="DEBUG")
        return item
