"""The four codecs of a v2 batch's records section (org.apache.kafka.common.compress).

Owns compress() and decompress() of the bytes after the 61-byte header, which
a compressed batch holds as ONE stream in the codec's container format:

    gzip   := RFC 1952 member+. Written like Java's GZIPOutputStream (JDK 17,
              Kafka's broker minimum): header 1f8b 08 00 00000000 00 ff
              (no name, mtime 0, XFL 0, OS unknown), raw deflate at
              Deflater's default level (6), CRC32 and size trailer.
    snappy := xerial framing, as snappy-java's SnappyOutputStream writes it
              (Kafka's SnappyCompression):
                  magic "\\x82SNAPPY\\x00" version:int32(1) compatible:int32(1)
                  (length:int32 raw-snappy-block){one per 32 KiB of input}
              Read also: further xerial headers between blocks (concatenated
              streams), and a bare raw snappy block with no framing at all,
              as SnappyInputStream accepts both.
    lz4    := LZ4 frame (Kafka's Lz4BlockOutputStream): magic 04224d18,
              FLG 0x60 (version 1, independent blocks, no checksums, no
              content size), BD 0x40 (64 KiB blocks), header checksum byte,
              blocks (int32 LE size, high bit = stored uncompressed), end mark
              0. Kafka's default level (9) means the FAST compressor; other
              levels use LZ4 HC. Read like Lz4BlockInputStream: dependent
              blocks or reserved bits refused.
    zstd   := zstd frame+, as zstd-jni's ZstdOutputStream writes it: level 3,
              no content size, no checksum.

Every decompression is bounded: more than `size_bytes_max` bytes of output
raises CorruptRecordError before much more than that is held in memory. Any
codec failure (bad framing, checksum, truncation) also raises
CorruptRecordError, never a codec library's own exception.
"""

from __future__ import annotations

import struct
import zlib

import cramjam
import lz4.frame
import zstandard

from franz.records.constants import (
    DECOMPRESSED_SIZE_BYTES_MAX,
    DECOMPRESSION_CHUNK_BYTES,
    CompressionType,
)
from franz.records.errors import CorruptRecordError

# ---- gzip ---------------------------------------------------------------------
GZIP_DEFAULT_LEVEL = 6  # Deflater.DEFAULT_COMPRESSION (-1) is zlib's level 6
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
_GZIP_MAGIC = b"\x1f\x8b"
_GZIP_TRAILER = struct.Struct("<II")

# ---- snappy (xerial) -------------------------------------------------------------
XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER = XERIAL_MAGIC + struct.pack(">ii", 1, 1)  # version 1, min compatible 1
XERIAL_BLOCK_SIZE = 32 * 1024  # SnappyOutputStream.DEFAULT_BLOCK_SIZE
_INT32_BE = struct.Struct(">i")

# ---- lz4 ----------------------------------------------------------------------
LZ4_DEFAULT_LEVEL = 9  # CompressionType.LZ4.defaultLevel(): selects the fast compressor
LZ4_MAGIC = b"\x04\x22\x4d\x18"
_LZ4_FLG_VERSION_MASK = 0xC0
_LZ4_FLG_VERSION_1 = 0x40
_LZ4_FLG_BLOCK_INDEPENDENCE = 0x20
_LZ4_FLG_RESERVED = 0x02
_LZ4_BD_RESERVED = 0x8F

# ---- zstd ---------------------------------------------------------------------
ZSTD_DEFAULT_LEVEL = 3
_ZSTD_MAGIC = 0xFD2FB528
_ZSTD_SKIPPABLE_MASK = 0xFFFFFFF0
_ZSTD_SKIPPABLE_MAGIC = 0x184D2A50


def compress(compression_type: CompressionType, data, level: int | None = None) -> bytes:
    """Compress a records section the way Kafka's producer does for this codec."""
    if compression_type == CompressionType.NONE:
        return bytes(data)
    if compression_type == CompressionType.GZIP:
        return _gzip_compress(data, GZIP_DEFAULT_LEVEL if level is None or level == -1 else level)
    if compression_type == CompressionType.SNAPPY:
        return _snappy_compress(data)
    if compression_type == CompressionType.LZ4:
        return _lz4_compress(data, LZ4_DEFAULT_LEVEL if level is None else level)
    if compression_type == CompressionType.ZSTD:
        return _zstd_compress(data, ZSTD_DEFAULT_LEVEL if level is None else level)
    raise ValueError(f"Unknown compression type {compression_type!r}")


def decompress(compression_type: CompressionType, data,
               size_bytes_max: int = DECOMPRESSED_SIZE_BYTES_MAX, position: int = -1) -> bytes:
    """Decompress a records section; at most `size_bytes_max` bytes of output.

    `position` (where the compressed data starts in the enclosing buffer) is
    only used in errors. Raises CorruptRecordError on any failure.
    """
    assert size_bytes_max >= 0
    try:
        if compression_type == CompressionType.NONE:
            if len(data) > size_bytes_max:
                raise _too_large(size_bytes_max, position)
            return bytes(data)
        if compression_type == CompressionType.GZIP:
            return _gzip_decompress(data, size_bytes_max, position)
        if compression_type == CompressionType.SNAPPY:
            return _snappy_decompress(data, size_bytes_max, position)
        if compression_type == CompressionType.LZ4:
            return _lz4_decompress(data, size_bytes_max, position)
        if compression_type == CompressionType.ZSTD:
            return _zstd_decompress(data, size_bytes_max, position)
    except CorruptRecordError:
        raise
    except Exception as e:  # codec libraries raise their own types; callers see one
        raise CorruptRecordError(
            f"Failed to decompress {CompressionType(compression_type).name_lower} "
            f"records: {type(e).__name__}: {e}", position) from e
    raise ValueError(f"Unknown compression type {compression_type!r}")


def _too_large(size_bytes_max: int, position: int) -> CorruptRecordError:
    return CorruptRecordError(
        f"Decompressed records exceed the limit of {size_bytes_max} bytes", position)


def _corrupt(codec: str, what: str, position: int) -> CorruptRecordError:
    return CorruptRecordError(f"Failed to decompress {codec} records: {what}", position)


# ---- gzip ---------------------------------------------------------------------
def _gzip_compress(data, level: int) -> bytes:
    deflater = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS, 8, zlib.Z_DEFAULT_STRATEGY)
    body = deflater.compress(data) + deflater.flush()
    return _GZIP_HEADER + body + _GZIP_TRAILER.pack(zlib.crc32(data), len(data) & 0xFFFFFFFF)


def _gzip_decompress(data, size_bytes_max: int, position: int) -> bytes:
    out = bytearray()
    pending = bytes(data)
    if pending[:2] != _GZIP_MAGIC:
        raise _corrupt("gzip", "not in GZIP format", position)
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)  # gzip wrapper only, trailer checked
    while True:
        chunk = inflater.decompress(pending, DECOMPRESSION_CHUNK_BYTES)
        out += chunk
        if len(out) > size_bytes_max:
            raise _too_large(size_bytes_max, position)
        pending = inflater.unconsumed_tail
        if inflater.eof:
            rest = inflater.unused_data
            # Like GZIPInputStream: another member follows, or trailing bytes
            # that are not a gzip header are ignored.
            if rest[:2] == _GZIP_MAGIC:
                inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
                pending = rest
                continue
            return bytes(out)
        if not pending and not chunk:
            raise _corrupt("gzip", "unexpected end of the gzip stream", position)


# ---- snappy -------------------------------------------------------------------
def _snappy_compress(data) -> bytes:
    view = memoryview(data)
    parts = [XERIAL_HEADER]
    for start in range(0, len(view), XERIAL_BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(view[start:start + XERIAL_BLOCK_SIZE]))
        parts.append(_INT32_BE.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def _raw_snappy_length(block, position: int) -> int:
    """The uncompressed length a raw snappy block declares (its varint preamble)."""
    value = 0
    for i in range(min(len(block), 5)):
        b = block[i]
        value |= (b & 0x7F) << (7 * i)
        if b < 0x80:
            return value
    raise _corrupt("snappy", "bad length preamble", position)


def _snappy_decompress(data, size_bytes_max: int, position: int) -> bytes:
    view = memoryview(data)
    n = len(view)
    if n < len(XERIAL_HEADER) or view[:len(XERIAL_MAGIC)] != XERIAL_MAGIC:
        # No xerial header: SnappyInputStream reads the whole input as one raw block.
        if _raw_snappy_length(view, position) > size_bytes_max:
            raise _too_large(size_bytes_max, position)
        return bytes(cramjam.snappy.decompress_raw(view))
    out = bytearray()
    pos = len(XERIAL_HEADER)
    while pos < n:
        if view[pos:pos + len(XERIAL_MAGIC)] == XERIAL_MAGIC:  # a concatenated stream
            pos += len(XERIAL_HEADER)
            continue
        if pos + 4 > n:
            raise _corrupt("snappy", "truncated block length", position)
        (block_size,) = _INT32_BE.unpack_from(view, pos)
        pos += 4
        if block_size < 0 or pos + block_size > n:
            raise _corrupt("snappy", f"block of {block_size} bytes runs past the data", position)
        block = view[pos:pos + block_size]
        pos += block_size
        if len(out) + _raw_snappy_length(block, position) > size_bytes_max:
            raise _too_large(size_bytes_max, position)
        out += cramjam.snappy.decompress_raw(block)
    return bytes(out)


# ---- lz4 ----------------------------------------------------------------------
def _lz4_compress(data, level: int) -> bytes:
    return lz4.frame.compress(
        data,
        # Kafka: the default level picks LZ4's fast compressor, any other level HC.
        compression_level=0 if level == LZ4_DEFAULT_LEVEL else level,
        block_size=lz4.frame.BLOCKSIZE_MAX64KB,
        block_linked=False,
        content_checksum=False,
        block_checksum=False,
        store_size=False,
    )


LZ4_FIRST_CALL_BYTES = 2 * 1024 * 1024  # a producer's batch (batch.size up to 1 MiB), decompressed


def _lz4_decompress(data, size_bytes_max: int, position: int) -> bytes:
    view = memoryview(data)
    if len(view) < 7 or view[:4] != LZ4_MAGIC:
        raise _corrupt("lz4", "not an LZ4 frame", position)
    flg, bd = view[4], view[5]
    if flg & _LZ4_FLG_VERSION_MASK != _LZ4_FLG_VERSION_1:
        raise _corrupt("lz4", f"frame version {(flg >> 6) & 3} is unsupported", position)
    if flg & _LZ4_FLG_RESERVED or bd & _LZ4_BD_RESERVED:
        raise _corrupt("lz4", "reserved bits must be 0", position)
    if not flg & _LZ4_FLG_BLOCK_INDEPENDENCE:
        raise _corrupt("lz4", "dependent block stream is unsupported", position)
    decompressor = lz4.frame.LZ4FrameDecompressor()
    # python-lz4 allocates max_length up front. The first call asks for what a producer's
    # batch decompresses to (up to LZ4_FIRST_CALL_BYTES, or 16x the input), each later call
    # for twice as much, never past the limit + 1: one or two calls for a batch, and no
    # allocation the data does not justify. (Fixed 256 KiB calls took 1.4 ms for a 1 MB
    # batch of 1 KiB records; two calls take 0.1 ms.)
    limit = size_bytes_max + 1
    want = min(limit, max(LZ4_FIRST_CALL_BYTES, 16 * len(view)))
    parts = []
    total = 0
    chunk = decompressor.decompress(view, max_length=want)
    while True:
        parts.append(chunk)
        total += len(chunk)
        if total > size_bytes_max:
            raise _too_large(size_bytes_max, position)
        if decompressor.eof:
            return chunk if len(parts) == 1 else b"".join(parts)
        if decompressor.needs_input:
            raise _corrupt("lz4", "unexpected end of the LZ4 frame", position)
        want = min(limit - total, 2 * want)
        chunk = decompressor.decompress(b"", max_length=want)


# ---- zstd ---------------------------------------------------------------------
def _zstd_compress(data, level: int) -> bytes:
    # compressobj streams: like zstd-jni's ZstdOutputStream, no content size is written.
    cobj = zstandard.ZstdCompressor(level=level, write_checksum=False).compressobj()
    return cobj.compress(data) + cobj.flush()


def _zstd_frame_end(view: memoryview, pos: int, position: int) -> int:
    """Where the zstd (or skippable) frame starting at `pos` ends; walks block headers only."""
    n = len(view)
    if pos + 4 > n:
        raise _corrupt("zstd", "truncated frame", position)
    magic = int.from_bytes(view[pos:pos + 4], "little")
    if magic & _ZSTD_SKIPPABLE_MASK == _ZSTD_SKIPPABLE_MAGIC:
        if pos + 8 > n:
            raise _corrupt("zstd", "truncated skippable frame", position)
        end = pos + 8 + int.from_bytes(view[pos + 4:pos + 8], "little")
    else:
        if magic != _ZSTD_MAGIC:
            raise _corrupt("zstd", "unknown frame descriptor", position)
        params = zstandard.get_frame_parameters(view[pos:pos + 18])
        end = pos + zstandard.frame_header_size(view[pos:pos + 18])
        while True:
            if end + 3 > n:
                raise _corrupt("zstd", "truncated block header", position)
            header = int.from_bytes(view[end:end + 3], "little")
            block_type = (header >> 1) & 3
            if block_type == 3:
                raise _corrupt("zstd", "reserved block type", position)
            end += 3 + (1 if block_type == 1 else header >> 3)  # an RLE block stores one byte
            if header & 1:  # last block
                break
        if params.has_checksum:
            end += 4
    if end > n:
        raise _corrupt("zstd", "truncated frame", position)
    return end


def _zstd_decompress_frame(dctx, frame: memoryview, budget: int, position: int) -> bytes:
    """One frame, at most budget + 1 bytes of output (max_output_size=0 would mean no limit)."""
    # A first guess sized for typical ratios keeps the output buffer small;
    # only a frame that needs more is retried with the whole budget.
    guess = min(budget, max(1 << 20, 64 * len(frame)))
    for limit in (guess, budget) if guess < budget else (budget,):
        try:
            return dctx.decompress(frame, max_output_size=max(limit, 1))
        except zstandard.ZstdError as e:
            if "did not decompress full frame" not in str(e):
                raise
    # Truncated, or more output than the budget: tell which (bounded read).
    probe = dctx.stream_reader(frame).read(budget + 1)
    if len(probe) > budget:
        raise CorruptRecordError(
            f"Decompressed records exceed the limit of {budget} bytes", position)
    raise _corrupt("zstd", "truncated frame", position)


def _zstd_decompress(data, size_bytes_max: int, position: int) -> bytes:
    view = memoryview(data)
    dctx = zstandard.ZstdDecompressor()
    parts = []
    total = 0
    pos = 0
    while pos < len(view):  # zstd-jni's stream reads concatenated frames too
        end = _zstd_frame_end(view, pos, position)
        frame = view[pos:end]
        if int.from_bytes(frame[:4], "little") != _ZSTD_MAGIC:
            pos = end  # skippable frame: no content
            continue
        budget = size_bytes_max - total
        declared = zstandard.frame_content_size(frame)
        if declared > budget:  # -1 (unknown) passes; max_output_size bounds it below
            raise _too_large(size_bytes_max, position)
        part = _zstd_decompress_frame(dctx, frame, budget, position)
        if len(part) > budget:
            raise _too_large(size_bytes_max, position)
        parts.append(part)
        total += len(part)
        pos = end
    if not parts and len(view) == 0:
        raise _corrupt("zstd", "empty input", position)
    return b"".join(parts)
