"""franz/records/compression.py: the four codecs, framed as Kafka writes them, bounded on read."""

import os
import shutil
import struct
import subprocess
import zlib

import cramjam
import lz4.frame
import pytest
import zstandard

from franz.records import (
    CompressionType,
    CorruptRecordError,
    RecordBatch,
    SimpleRecord,
    build_batch,
)
from franz.records.compression import (
    XERIAL_BLOCK_SIZE,
    XERIAL_HEADER,
    compress,
    decompress,
)

CODECS = [CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD]
PAYLOAD = b"".join(b"record %d with some repetitive text; " % i for i in range(5000))  # ~180 KB
BOMB = b"\x00" * (4 * 1024 * 1024)


@pytest.mark.parametrize("codec", CODECS + [CompressionType.NONE])
@pytest.mark.parametrize("data", [b"", b"x", PAYLOAD], ids=["empty", "one-byte", "180KB"])
def test_round_trip(codec, data):
    assert decompress(codec, compress(codec, data)) == data
    assert decompress(codec, memoryview(compress(codec, data))) == data


@pytest.mark.parametrize("codec", CODECS + [CompressionType.NONE])
def test_output_beyond_limit_is_refused(codec):
    with pytest.raises(CorruptRecordError, match="exceed the limit"):
        decompress(codec, compress(codec, BOMB), size_bytes_max=1024 * 1024, position=61)


@pytest.mark.parametrize("codec", CODECS)
def test_output_exactly_at_limit_is_accepted(codec):
    assert len(decompress(codec, compress(codec, BOMB), size_bytes_max=len(BOMB))) == len(BOMB)


@pytest.mark.parametrize("codec", CODECS)
def test_truncated_stream_is_corrupt(codec):
    data = compress(codec, PAYLOAD)
    with pytest.raises(CorruptRecordError) as e:
        decompress(codec, data[: len(data) // 2], position=99)
    assert e.value.position == 99


@pytest.mark.parametrize("codec", CODECS)
def test_garbage_is_corrupt_not_a_library_error(codec):
    with pytest.raises(CorruptRecordError):
        decompress(codec, b"\x00\x01\x02garbage" * 10)


# ---- gzip -------------------------------------------------------------------
def test_gzip_header_is_javas_gzip_output_stream():
    data = compress(CompressionType.GZIP, PAYLOAD)
    assert data[:10] == b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    crc, size = struct.unpack("<II", data[-8:])
    assert crc == zlib.crc32(PAYLOAD) and size == len(PAYLOAD)
    # The body is raw deflate at zlib's default level, as java.util.zip.Deflater writes it.
    deflater = zlib.compressobj(6, zlib.DEFLATED, -15)
    assert data[10:-8] == deflater.compress(PAYLOAD) + deflater.flush()


def test_gzip_reads_concatenated_members_and_ignores_trailing_garbage():
    two = compress(CompressionType.GZIP, b"abc") + compress(CompressionType.GZIP, b"def")
    assert decompress(CompressionType.GZIP, two) == b"abcdef"
    assert decompress(CompressionType.GZIP, compress(CompressionType.GZIP, b"abc") + b"junk") == b"abc"


def test_gzip_bad_trailer_crc_is_corrupt():
    data = bytearray(compress(CompressionType.GZIP, PAYLOAD))
    data[-6] ^= 0xFF
    with pytest.raises(CorruptRecordError):
        decompress(CompressionType.GZIP, bytes(data))


# ---- snappy -----------------------------------------------------------------
def test_snappy_writes_xerial_framing_in_32k_blocks():
    data = compress(CompressionType.SNAPPY, PAYLOAD)
    assert data[:16] == b"\x82SNAPPY\x00" + b"\x00\x00\x00\x01" * 2 == XERIAL_HEADER
    pos, blocks = 16, []
    while pos < len(data):
        (n,) = struct.unpack_from(">i", data, pos)
        blocks.append(bytes(cramjam.snappy.decompress_raw(data[pos + 4:pos + 4 + n])))
        pos += 4 + n
    assert pos == len(data)
    assert [len(b) for b in blocks[:-1]] == [XERIAL_BLOCK_SIZE] * (len(blocks) - 1)
    assert b"".join(blocks) == PAYLOAD


def test_snappy_reads_raw_blocks_without_framing():
    raw = bytes(cramjam.snappy.compress_raw(PAYLOAD))
    assert decompress(CompressionType.SNAPPY, raw) == PAYLOAD


def test_snappy_reads_concatenated_xerial_streams():
    two = compress(CompressionType.SNAPPY, b"abc") + compress(CompressionType.SNAPPY, b"def")
    assert decompress(CompressionType.SNAPPY, two) == b"abcdef"


def test_snappy_block_claiming_huge_output_is_refused_before_decompressing():
    claim = bytearray(b"\xff\xff\xff\xff\x0f") + b"\x00" * 10  # preamble: 4 GiB
    with pytest.raises(CorruptRecordError, match="exceed the limit"):
        decompress(CompressionType.SNAPPY, XERIAL_HEADER + struct.pack(">i", len(claim)) + claim)


def test_snappy_negative_block_length_is_corrupt():
    with pytest.raises(CorruptRecordError):
        decompress(CompressionType.SNAPPY, XERIAL_HEADER + struct.pack(">i", -5) + b"x")


# ---- lz4 --------------------------------------------------------------------
def test_lz4_frame_descriptor_is_kafkas():
    data = compress(CompressionType.LZ4, PAYLOAD)
    # magic, FLG 0x60 (v1, independent blocks), BD 0x40 (64 KiB), HC = xxh32(FLG BD) >> 8
    assert data[:7] == bytes.fromhex("04224d18604082")
    assert data[-4:] == b"\x00\x00\x00\x00"  # end mark, no content checksum
    assert compress(CompressionType.LZ4, b"") == bytes.fromhex("04224d1860408200000000")


def test_lz4_incompressible_block_is_stored_with_high_bit():
    noise = os.urandom(1000)
    data = compress(CompressionType.LZ4, noise)
    (size,) = struct.unpack_from("<I", data, 7)
    assert size == 0x80000000 | 1000 and data[11:1011] == noise


def test_lz4_dependent_blocks_are_refused_like_kafka():
    linked = lz4.frame.compress(PAYLOAD, block_linked=True, block_size=lz4.frame.BLOCKSIZE_MAX64KB)
    with pytest.raises(CorruptRecordError, match="dependent"):
        decompress(CompressionType.LZ4, linked)


def test_lz4_bad_header_checksum_is_corrupt():
    data = bytearray(compress(CompressionType.LZ4, PAYLOAD))
    data[6] ^= 0xFF
    with pytest.raises(CorruptRecordError):
        decompress(CompressionType.LZ4, bytes(data))


def test_lz4_hc_levels_decode():
    data = compress(CompressionType.LZ4, PAYLOAD, level=12)
    assert decompress(CompressionType.LZ4, data) == PAYLOAD


# ---- zstd -------------------------------------------------------------------
def test_zstd_frame_has_no_content_size_and_no_checksum():
    data = compress(CompressionType.ZSTD, PAYLOAD)
    params = zstandard.get_frame_parameters(data)
    assert params.content_size == zstandard.CONTENTSIZE_UNKNOWN and not params.has_checksum


def test_zstd_reads_concatenated_and_skippable_frames():
    skippable = struct.pack("<II", 0x184D2A50, 3) + b"abc"
    data = compress(CompressionType.ZSTD, b"abc") + skippable + compress(CompressionType.ZSTD, b"def")
    assert decompress(CompressionType.ZSTD, data) == b"abcdef"


def test_zstd_declared_content_size_beyond_limit_is_refused_up_front():
    data = zstandard.ZstdCompressor(write_content_size=True).compress(BOMB)
    with pytest.raises(CorruptRecordError, match="exceed the limit"):
        decompress(CompressionType.ZSTD, data, size_bytes_max=1000)


def test_zstd_frames_with_checksum_decode():
    data = zstandard.ZstdCompressor(write_checksum=True).compress(PAYLOAD)
    assert decompress(CompressionType.ZSTD, data) == PAYLOAD


# ---- through a batch ------------------------------------------------------------
@pytest.mark.parametrize("codec", CODECS)
def test_batch_decompression_is_bounded(codec):
    b = RecordBatch(build_batch([SimpleRecord(BOMB, timestamp=1)], compression_type=codec))
    assert b.is_valid()
    with pytest.raises(CorruptRecordError) as e:
        b.records(decompressed_size_bytes_max=1024 * 1024)
    assert e.value.position == 61
    assert next(b.records()).value == BOMB


@pytest.mark.parametrize("codec", CODECS)
def test_batch_records_section_is_one_stream_after_the_header(codec):
    recs = [SimpleRecord(b"v%d" % i, timestamp=10) for i in range(50)]
    plain = RecordBatch(build_batch(recs))
    packed = RecordBatch(build_batch(recs, compression_type=codec))
    section = packed.to_bytes()[61:]
    assert decompress(codec, section) == plain.to_bytes()[61:]


JAVA_GZIP_LIKE_KAFKA = """
import java.io.*;
import java.util.zip.*;

public class GzipLikeKafka {
    // Kafka's GzipCompression.wrapForOutput: BufferedOutputStream(16 KiB) over
    // GzipOutputStream(8 KiB buffer, level) (a GZIPOutputStream that sets the level).
    static class Gz extends GZIPOutputStream {
        Gz(OutputStream o, int size, int level) throws IOException { super(o, size); def.setLevel(level); }
    }
    public static void main(String[] args) throws Exception {
        DataInputStream in = new DataInputStream(System.in);
        DataOutputStream stdout = new DataOutputStream(new BufferedOutputStream(System.out));
        int count = in.readInt();
        for (int n = 0; n < count; n++) {
            byte[] data = new byte[in.readInt()];
            in.readFully(data);
            ByteArrayOutputStream bos = new ByteArrayOutputStream();
            try (OutputStream out = new BufferedOutputStream(new Gz(bos, 8 * 1024, -1), 16 * 1024)) {
                for (int i = 0; i < data.length; i += 100)  // records arrive in small writes
                    out.write(data, i, Math.min(100, data.length - i));
            }
            stdout.writeInt(bos.size());
            stdout.write(bos.toByteArray());
        }
        stdout.flush();
    }
}
"""


@pytest.mark.interop
@pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK (java File.java compiles the source)")
def test_gzip_bytes_equal_the_jdks_as_kafka_drives_it(tmp_path):
    source = tmp_path / "GzipLikeKafka.java"
    source.write_text(JAVA_GZIP_LIKE_KAFKA)
    sections = [b"", b"x", PAYLOAD, os.urandom(70000),
                build_batch([SimpleRecord(b"v%d" % i * 30, b"k", 1000 + i) for i in range(500)])[61:]]
    stdin = struct.pack(">i", len(sections)) + b"".join(struct.pack(">i", len(s)) + s for s in sections)
    out = subprocess.run(["java", str(source)], input=stdin, capture_output=True, check=True,
                         timeout=120).stdout
    pos = 0
    for section in sections:
        (n,) = struct.unpack_from(">i", out, pos)
        assert out[pos + 4:pos + 4 + n] == compress(CompressionType.GZIP, section)
        pos += 4 + n
    assert pos == len(out)
