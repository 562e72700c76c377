#!/usr/bin/env python3
"""Writes the seed corpora under Fuzz/Corpus/<target>/ from the real session capture
(shared vectors: goblip-session.pcap, a go-blip client and server), samples/ and hand-made
inputs. Run from the repository root: python3 Fuzz/make-seeds.py [path/to/goblip-session.pcap].
Each file is in the input layout its target's source describes. Files named regression-* are
inputs the fuzzer found crashing (since fixed, and tests of their module), added by hand."""
import os, struct, sys, zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PCAP = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "samples", "goblip-session.pcap")
OUT = os.path.join(ROOT, "Fuzz", "Corpus")


def write(target, name, data):
    os.makedirs(os.path.join(OUT, target), exist_ok=True)
    with open(os.path.join(OUT, target, name), "wb") as f:
        f.write(bytes(data))


def u16(n):
    return struct.pack("<H", min(n, 0xFFFF))


def record16(data):
    return u16(len(data)) + bytes(data)


def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


# ── pcapng: section header, interface description, enhanced packet blocks ──────────────────
raw = open(PCAP, "rb").read()
blocks, packets, offset = [], [], 0
while offset + 12 <= len(raw):
    btype, blen = struct.unpack_from("<II", raw, offset)
    blocks.append((btype, raw[offset:offset + blen]))
    if btype == 6:
        _, _, _, caplen, _ = struct.unpack_from("<IIIII", raw, offset + 8)
        packets.append((len(blocks) - 1, raw[offset + 28:offset + 28 + caplen]))
    offset += blen


def tcp_of(frame):
    ihl = (frame[14] & 0x0F) * 4
    total = struct.unpack_from(">H", frame, 16)[0]
    tcp = frame[14 + ihl:14 + total]
    sport, dport, seq = struct.unpack_from(">HHI", tcp, 0)
    return sport, seq, tcp[(tcp[12] >> 4) * 4:]


# ── the two TCP streams, then the HTTP heads and WebSocket frames in them ────────────────────
streams, first_port, order = {}, None, []
for index, (_, frame) in enumerate(packets):
    sport, seq, payload = tcp_of(frame)
    if not payload:
        continue
    first_port = first_port or sport
    side = 0 if sport == first_port else 1
    data = streams.setdefault(side, bytearray())
    order.append((index, side, len(data), len(payload)))
    data += payload

heads, ws = {}, {}
frames = []  # (packet-order key, side, opcode, unmasked payload)
for side, data in streams.items():
    end = data.index(b"\r\n\r\n") + 4
    heads[side], ws[side] = bytes(data[:end]), bytes(data[end:])
    pos, stream = 0, ws[side]
    while pos + 2 <= len(stream):
        b0, b1 = stream[pos], stream[pos + 1]
        length, cur = b1 & 0x7F, pos + 2
        if length == 126:
            length, cur = struct.unpack_from(">H", stream, cur)[0], cur + 2
        elif length == 127:
            length, cur = struct.unpack_from(">Q", stream, cur)[0], cur + 8
        key = None
        if b1 & 0x80:
            key, cur = stream[cur:cur + 4], cur + 4
        payload = bytearray(stream[cur:cur + length])
        if key:
            for i in range(len(payload)):
                payload[i] ^= key[i % 4]
        frames.append((end + pos, side, b0 & 0x0F, bytes(payload)))
        pos = cur + length


def time_order(item):
    offset, side = item[0], item[1]
    for index, s, start, size in order:
        if s == side and start <= offset < start + size:
            return index
    return 1 << 30


frames.sort(key=time_order)
blip = [(side, payload) for _, side, opcode, payload in frames if opcode == 2]

# ── blip-frames: records control(direction) || len16 || frame ─────────────────────────────────
def frame_records(items, budget):
    out = bytearray()
    for side, payload in items:
        if len(out) + len(payload) + 3 > budget:
            break
        out += bytes([side]) + record16(payload)
    return out

write("fuzz-blip-frames", "session-start", b"\x00" + frame_records(blip, 6000))
write("fuzz-blip-frames", "session-start-fixcrc", b"\x01" + frame_records(blip, 6000))
write("fuzz-blip-frames", "session-start-small-limits", b"\x05" + frame_records(blip, 3000))
write("fuzz-blip-frames", "client-only-exposed", b"\x0a" + frame_records([b for b in blip if b[0] == 0], 4000))
small = [b for b in blip if len(b[1]) < 600]
for i in range(0, min(len(small), 40), 8):
    write("fuzz-blip-frames", f"session-{i}-fixcrc", b"\x01" + frame_records(small[i:i + 8], 4000))
compressed = [b for b in blip if len(b[1]) > 1 and b[1][1] & 0x08]
write("fuzz-blip-frames", "compressed-fixcrc", b"\x01" + frame_records(compressed[:6], 4000))
write("fuzz-blip-frames", "ack", b"\x00" + bytes([1]) + record16(b"\x01\x04\x90\x4e"))

# ── properties: a limit choice, then an uncompressed frame's stream (varint P, block, body) ───
def header_length(frame):
    pos = 0
    for _ in range(2):
        while frame[pos] & 0x80:
            pos += 1
        pos += 1
    return pos

count = 0
for side, payload in blip:
    flags = payload[header_length(payload) - 1]
    if flags & 0x07 in (0, 1, 2) and not flags & 0x48 and count < 10:
        write("fuzz-properties", f"frame-{count}", b"\x00" + payload[header_length(payload):-4])
        count += 1
write("fuzz-properties", "empty", b"\x00\x00")
write("fuzz-properties", "profile-small-limit", b"\x03" + varint(13) + b"Profile\x00rev\x00\x00body")
write("fuzz-properties", "non-minimal-length", b"\x00\x8d\x00Profile\x00rev\x00\x00")

# ── WebSocket streams: the client's (masked) and the server's after the 101 ───────────────────
write("fuzz-websocket-scanner", "client", b"\x01\x00" + ws[0][:4000])
write("fuzz-websocket-scanner", "server", b"\x00\x00" + ws[1][:4000])
write("fuzz-websocket-scanner", "client-cut", b"\x01\x04" + b"\x03\x00\x11\x00\x40\x00\x01\x00" + ws[0][:2000])
write("fuzz-websocket-scanner", "server-small-limit", b"\x06\x00" + ws[1][:2000])
write("fuzz-websocket-scanner", "close-ping", b"\x00\x00" + b"\x89\x02hi\x8a\x00\x88\x02\x03\xe8")
write("fuzz-websocket-messages", "client", b"\x00\x00" + ws[0][:4000])
write("fuzz-websocket-messages", "server", b"\x01\x00" + ws[1][:4000])
write("fuzz-websocket-messages", "client-cut", b"\x00\x03" + b"\x05\x00\x02\x00\x30\x00" + ws[0][:2000])
write("fuzz-websocket-messages", "fragments-close", b"\x01\x00" + b"\x02\x03abc\x89\x01p\x80\x02de\x88\x04\x03\xe8ok" + b"tail")
write("fuzz-websocket-messages", "server-tail", b"\x01\x00" + ws[1][-600:])

# ── HTTP heads ──────────────────────────────────────────────────────────────────────────────────
write("fuzz-http-upgrade", "request", b"\x00\x00" + heads[0] + ws[0][:64])
write("fuzz-http-upgrade", "response", b"\x01\x00" + heads[1] + ws[1][:64])
write("fuzz-http-upgrade", "request-cut", b"\x00\x03\x05\x00\x20\x00\x01\x00" + heads[0])
write("fuzz-http-upgrade", "response-folded", b"\x01\x00HTTP/1.1 101\nUpgrade: websocket\n X-Folded: a\n\tb\nContent-Length: 3\n\nabc")
write("fuzz-http-upgrade", "request-bare-lf", b"\x02\x00\r\n\r\nGET /db/_blipsync?x=1 HTTP/1.1\nHost: h\n\n")
write("fuzz-relay-handshake", "goblip-request", heads[0])
write("fuzz-relay-handshake", "basic-auth",
      b"GET /db%20x/_blipsync?client=1 HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n"
      b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
      b"Sec-WebSocket-Protocol: BLIP_3+CBMobile_4, BLIP_3+CBMobile_3\r\nAuthorization: Basic YWxpY2U6c2VjcmV0\r\n\r\n")
write("fuzz-relay-handshake", "cookie-version-8",
      b"GET /db/_blipsync HTTP/1.1\r\nUpgrade: WebSocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: x\r\n"
      b"Sec-WebSocket-Version: 8\r\nCookie: a=1; SyncGatewaySession=abc\r\n\r\n")
write("fuzz-relay-handshake", "not-found", b"POST /other HTTP/1.1\r\nContent-Length: 4\r\n\r\nbody")

# ── pcap files: the session's start as pcapng (as written) and as classic pcap ──────────────────
first = packets[:24]
shb_idb = b"".join(block for btype, block in blocks[:first[0][0]] if btype in (0x0A0D0D0A, 1))
write("fuzz-pcap-file", "session-start.pcapng", shb_idb + b"".join(blocks[i][1] for i, _ in first))
classic = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
nano = struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1)
for name, head in (("session-start.pcap", classic), ("session-start-ns.pcap", nano)):
    body = b"".join(struct.pack("<IIII", 1700000000 + i, i * 1000, len(f), len(f)) + f for i, (_, f) in enumerate(first))
    write("fuzz-pcap-file", name, head + body)
write("fuzz-pcap-file", "truncated.pcap", (classic + struct.pack("<IIII", 1, 0, 40, 40) + first[3][1])[:70])

# ── in-memory packets: a link type choice, then len16 || packet ─────────────────────────────────
write("fuzz-capture-packets", "ethernet", b"\x00" + b"".join(record16(f) for _, f in packets[:28]))
write("fuzz-capture-packets", "raw-ip", b"\x02" + b"".join(record16(f[14:]) for _, f in packets[:28]))
write("fuzz-capture-packets", "ethernet-small-limits", b"\x10" + b"".join(record16(f) for _, f in packets[:20]))
sll2 = lambda f: b"\x08\x00" + b"\x00" * 18 + f[14:]
write("fuzz-capture-packets", "sll2", b"\x09" + b"".join(record16(sll2(f)) for _, f in packets[:12]))

# ── the live sniffer: the same layout; joined at the start, and in the middle of the session ────
write("fuzz-sniff", "from-start-port", b"\x40" + b"".join(record16(f) for _, f in packets[:24]))
write("fuzz-sniff", "mid-session", b"\x00" + b"".join(record16(f) for _, f in packets[10:40] if len(f) < 1500))
write("fuzz-sniff", "mid-session-idle-acks", b"\xb0" + b"".join(record16(f) for _, f in packets[30:50] if len(f) < 1500))

# ── a relay session: each side's reads in capture order (op || len16 || bytes, then read complete) ─
def session_ops(budget, policy_ops=b""):
    out = bytearray(b"\x06\x86")  # both sides ask to read
    for _, side, start, size in order:
        head = len(heads[side])
        if start + size <= head:
            continue
        chunk = streams[side][max(start, head):start + size]
        if len(out) + len(chunk) > budget:
            break
        out += bytes([side << 7]) + record16(chunk) + bytes([side << 7 | 5, side << 7 | 6])
    return bytes(out) + policy_ops
write("fuzz-relay-session", "pass-through", b"\x00" + session_ops(6000))
write("fuzz-relay-session", "strict", b"\x01" + session_ops(4000))
write("fuzz-relay-session", "policy", b"\x02" + session_ops(6000, b"\x09\x00\x09\x01"))
frame_op = lambda side, opcode, payload: bytes([side << 7 | 4, opcode]) + record16(payload)
write("fuzz-relay-session", "control-frames", b"\x00\x06\x86" + frame_op(0, 9, b"ping") + frame_op(1, 10, b"")
      + bytes([5, 0x85]) + frame_op(0, 8, b"\x03\xe8bye") + bytes([5]) + frame_op(1, 8, b"\x03\xe8") + bytes([0x85, 0x0b]))

# ── TCP reassembly: mode, ISN, stream, segments kind || offset16 || length16 ────────────────────
text = b"GET /db/_blipsync HTTP/1.1\r\nHost: x\r\n\r\n" + bytes(range(64))
seg = lambda kind, off, n: bytes([kind]) + struct.pack("<HH", off, n)
write("fuzz-tcp-reassembly", "in-order-syn", b"\x01" + struct.pack("<I", 1000) + record16(text)
      + seg(0, 0, 30) + seg(0, 30, 30) + seg(1, 60, 200))
write("fuzz-tcp-reassembly", "out-of-order-wrap", b"\x00" + struct.pack("<I", 0xFFFFFFF0) + record16(text)
      + seg(0, 10, 20) + seg(0, 50, 40) + seg(0, 0, 12) + seg(0, 25, 40) + seg(0, 5, 3) + seg(1, 90, 20))
write("fuzz-tcp-reassembly", "limit-gap", b"\x04" + struct.pack("<I", 7) + record16(text)
      + seg(0, 0, 5) + seg(0, 40, 30) + seg(2, 70, 9) + b"injected!")

# ── .blipcap: header, then len32le || version || kind || body || crc32le records ────────────────
def cstring(s):
    return varint(len(s)) + s

def rec(kind, body, version=2):
    content = bytes([version, kind]) + body
    return struct.pack("<I", len(content)) + content + struct.pack("<I", zlib.crc32(content))

def headers(pairs):
    return varint(len(pairs)) + b"".join(cstring(k) + cstring(v) for k, v in pairs)

t = varint(1_700_000_000_000_000_000)
handshake = (t + varint(7) + cstring(b"127.0.0.1:46014") + cstring(b"GET /db/_blipsync HTTP/1.1")
             + headers([(b"Sec-WebSocket-Protocol", b"BLIP_3+CBMobile_3")]) + cstring(b"ws://127.0.0.1:4984/db/_blipsync")
             + varint(101) + cstring(b"Switching Protocols") + headers([(b"Sec-WebSocket-Protocol", b"BLIP_3+CBMobile_3")])
             + b"\x01" + cstring(b"BLIP_3+CBMobile_3"))
records = rec(1, handshake)
for side, payload in [b for b in blip[:40] if len(b[1]) < 1200][:12]:
    records += rec(2, t + bytes([side, 0]) + varint(len(payload)) + payload)
props = b"Profile\x00rev\x00id\x00doc\x00"
records += rec(3, t + b"\x00" + varint(3) + b"\x00" + varint(len(props)) + props)
records += rec(4, t + b"\x00" + varint(3) + cstring(b"deny") + cstring(b"rule no-drafts"))
records += rec(5, t + varint(2) + cstring(b"queue full"))
records += rec(2, t + b"\x01" + varint(len(blip[0][1])) + blip[0][1], version=1)
records += rec(6, t + b"\x00" + varint(1001) + cstring(b"bye"))
records += rec(7, t + cstring(b"a note"))
header = b"\x89BLIPCAP" + struct.pack("<HHIQ", 1, 0, 1, 7)
write("fuzz-blipcap", "session.blipcap", b"\x01" + header + records)
write("fuzz-blipcap", "records-fixcrc", b"\x02" + records)
write("fuzz-blipcap", "damaged", b"\x00" + records[:40] + b"\xff" * 7 + records[40:300])
write("fuzz-blipcap", "cut-tail", b"\x00" + records[:-5])

# ── replication bodies: profile, flags, properties block, request body, reply body ──────────────
PROFILES = ["changes", "rev", "proposeChanges", "setCheckpoint", "getCheckpoint", "subChanges", "unsubChanges",
            "norev", "getAttachment", "proveAttachment", "getRev", "putRev", "getCollections", "PING", "echo"]
def block(pairs):
    return b"".join(k + b"\x00" + v + b"\x00" for k, v in pairs)
replication = {
    "changes": ({}, b'[[1,"doc1","1-abc"],[2,"doc2","2-def",true],[3,"doc3","1-x",false,120],["4::7","d4","3-z"]]',
                b'[["1-aaa"],0,[],null]'),
    "rev": ({b"id": b"doc1", b"rev": b"2-def", b"sequence": b"9", b"history": b"1-abc", b"deleted": b"1"},
            b'{"name":"x","_attachments":{"a.png":{"digest":"sha1-AAA=","length":10,"content_type":"image/png",'
            b'"revpos":1,"stub":true}},"photo":{"@type":"blob","digest":"sha1-BBB=","length":3}}', b""),
    "proposeChanges": ({}, b'[["doc1","1-abc"],["doc2","2-def","1-abc",40]]', b"[0,304,409]"),
    "setCheckpoint": ({b"client": b"cp-1", b"rev": b"0-3"}, b'{"client_seq":"12","remote":5}', b""),
    "getCheckpoint": ({b"client": b"cp-1"}, b"", b'{"client_seq":"3","time":1}'),
    "subChanges": ({b"since": b"5", b"continuous": b"true", b"filter": b"sync_gateway/bychannel",
                    b"channels": b"a,b", b"activeOnly": b"true"}, b'{"docIDs":["a","b"]}', b""),
    "norev": ({b"id": b"doc1", b"rev": b"1-a", b"error": b"404", b"reason": b"missing"}, b"", b""),
    "getAttachment": ({b"digest": b"sha1-AAA=", b"docID": b"doc1"}, b"", b"\x89PNG...."),
    "proveAttachment": ({b"digest": b"sha1-AAA="}, b"nonce", b"sha1-proof"),
    "getRev": ({b"id": b"doc1", b"ifNotRev": b"1-a"}, b"", b'{"_rev":"2-b","v":1}'),
    "getCollections": ({}, b'{"checkpoint_ids":["cp1","cp2"],"collections":["_default._default","inv.items"]}',
                       b'[{"client_seq":1},null]'),
}
for profile, (pairs, body, reply) in replication.items():
    data = bytes([PROFILES.index(profile), 4 if pairs else 0]) + record16(block(pairs.items())) + record16(body) + reply
    write("fuzz-replication", profile, data)
write("fuzz-replication", "error-reply", bytes([1, 6]) + record16(block([(b"id", b"x")])) + record16(b"{}") + b"not found")
write("fuzz-json", "changes", b"\x00" + record16(replication["changes"][1]) + replication["changes"][2])
write("fuzz-json", "proposeChanges", b"\x03" + record16(replication["proposeChanges"][1]) + b"[0,304]")
write("fuzz-json", "rev-body", b"\x00" + record16(replication["rev"][1]))
write("fuzz-json", "escapes", b"\x00" + record16(b'{"a\\u00e9\\n":[1.5e-3,-0,true,false,null,"\\ud83d\\ude00"]}'))
write("fuzz-json", "session-body", b"\x00" + record16(b'[[17,"doc-17","1-0f3c",false,312],[18,"doc-18","2-aa"]]') + b"[[],[\"1-a\"]]")

# ── policy YAML ─────────────────────────────────────────────────────────────────────────────────
for name in ("policy.yaml", "policy-bench-20.yaml"):
    write("fuzz-policy", name, open(os.path.join(ROOT, "samples", name), "rb").read())
write("fuzz-policy", "empty.yaml", b"")
write("fuzz-policy", "connections.yaml", b"connections:\n  default: deny\n  rules:\n    - name: lan\n"
      b"      match: { clientIP: [\"10.0.0.0/8\", \"::1/128\"] }\n      action: allow\n")
write("fuzz-policy", "regex.yaml", b"rules:\n  - name: r\n    match: { doc: \"re:^draft-[0-9]+$\", profile: [rev, norev] }\n"
      b"    action: { delay: 250ms }\n")

# ── blip-assembly: hand-made op scripts (see the target) ────────────────────────────────────────
start = lambda side, flags, props, body: bytes([side << 7 | 0, flags, len(props)]) + b"".join(
    bytes([len(k)]) + k + bytes([len(v)]) + v for k, v in props) + record16(body)
frame = lambda side, choice, size: bytes([side << 7 | 2, choice]) + struct.pack("<H", size)
reply = lambda side, flags, choice, body: bytes([side << 7 | 1, flags, choice, 0]) + record16(body)
write("fuzz-blip-assembly", "request-reply", start(0, 0, [(b"Profile", b"echo")], b"hello" * 20)
      + frame(0, 0, 40) + frame(0, 0, 400) + reply(1, 0, 0, b"hi") + frame(1, 0, 9))
write("fuzz-blip-assembly", "interleaved-compressed",
      start(0, 1, [(b"Profile", b"rev"), (b"id", b"d")], b"{\"a\":1}" * 60) + start(0, 2, [(b"Profile", b"changes")], b"[]")
      + start(1, 5, [(b"Profile", b"changes")], b"[[1,\"a\",\"1-a\"]]" * 9) + frame(0, 0, 100) + frame(0, 1, 100)
      + frame(1, 0, 7) + frame(0, 0, 1000) + bytes([4, 1, 1, 0, 0x10, 0, 0, 0]) + reply(1, 4, 0, b"err")
      + frame(1, 1, 30) + frame(1, 0, 30))

# ── capture-redactor: BLIP frames with secret properties, compressed and not, split ────────────
class Sender:
    """One direction as a BLIP sender writes it: a running CRC and one raw deflate stream."""
    def __init__(self):
        self.crc = 0
        self.deflater = zlib.compressobj(6, zlib.DEFLATED, -15)

    def frame(self, number, flags, chunk):
        self.crc = zlib.crc32(chunk, self.crc)
        if flags & 0x08:
            data = self.deflater.compress(chunk) + self.deflater.flush(zlib.Z_SYNC_FLUSH)
            assert data.endswith(b"\x00\x00\xff\xff")
            payload = data[:-4]
        else:
            payload = chunk
        return varint(number) + varint(flags) + payload + struct.pack(">I", self.crc)


def message_frames(sender, number, flags, props, body, frame_size):
    block = b"".join(k + b"\x00" + v + b"\x00" for k, v in props)
    stream = varint(len(block)) + block + body
    chunks = [stream[i:i + frame_size] for i in range(0, len(stream), frame_size)] or [b""]
    return [sender.frame(number, flags | (0x40 if i < len(chunks) - 1 else 0), chunk) for i, chunk in enumerate(chunks)]


client, server = Sender(), Sender()
secret = b"s3cr3t-" + b"v4lue-" * 8
records = bytearray()
for number, (flags, props, body, size) in enumerate([
        (0x00, [(b"Profile", b"getCheckpoint"), (b"client", b"cp-1")], b"", 200),
        (0x08, [(b"Profile", b"login"), (b"Authorization", b"Bearer " + secret)], b"{\"a\":1}" * 40, 30),
        (0x00, [(b"Profile", b"login"), (b"token", secret), (b"password", b"pw")], b"{}", 20),
        (0x08, [(b"Profile", b"rev"), (b"id", b"doc-1"), (b"Cookie", b"SyncGatewaySession=" + secret)], b"{\"b\":2}" * 60, 64),
        (0x08, [(b"Profile", b"changes")], b"[[1,\"a\",\"1-a\"]]" * 20, 128)], start=1):
    for payload in message_frames(client, number, flags, props, body, size):
        records += b"\x00" + record16(payload)
    for payload in message_frames(server, number, flags & 0x08 | 0x01, [(b"SyncGatewaySession", secret)] if number == 2 else [],
                                  b"{\"ok\":true}", 16):
        records += b"\x01" + record16(payload)
write("fuzz-capture-redactor", "secrets", b"\x00" + records)
write("fuzz-capture-redactor", "secrets-fixcrc", b"\x01" + records)
write("fuzz-capture-redactor", "secrets-small-limits", b"\x05" + records)
write("fuzz-capture-redactor", "goblip-session-fixcrc", b"\x01" + frame_records(blip, 6000))


# ── fuzz-resp: RESP2 replies as a server sends them (mode byte: limits; then cut sizes) ─────
resp = (b"+OK\r\n-ERR unknown command 'FOO'\r\n:0\r\n:-9223372036854775808\r\n$5\r\nhe\r\no\r\n$0\r\n\r\n"
        b"$-1\r\n*-1\r\n*0\r\n*3\r\n:1\r\n*2\r\n$1\r\na\r\n$-1\r\n-WRONGTYPE x\r\n")
write("fuzz-resp", "every-type", b"\x00\x00" + resp)
write("fuzz-resp", "every-type-cut", b"\x00\x04" + b"\x01\x00\x02\x00\x07\x00\x03\x00" + resp)
write("fuzz-resp", "small-limits", b"\x01\x00" + resp)
write("fuzz-resp", "scan-reply", b"\x03\x00*2\r\n$1\r\n0\r\n*3\r\n$9\r\nsession:a\r\n$9\r\nsession:b\r\n$9\r\nsession:c\r\n")
write("fuzz-resp", "time-and-hgetall", b"\x00\x00*2\r\n$10\r\n1700000000\r\n$6\r\n123456\r\n"
      b"*4\r\n$4\r\nuser\r\n$5\r\nalice\r\n$5\r\nrelay\r\n$2\r\nr1\r\n")
write("fuzz-resp", "noscript", b"\x00\x00-NOSCRIPT No matching script. Please use EVAL.\r\n:7\r\n")
write("fuzz-resp", "deep-nesting", b"\x06\x00" + b"*1\r\n" * 10 + b":1\r\n")
write("fuzz-resp", "huge-bulk", b"\x00\x00$2000000000\r\n")
write("fuzz-resp", "resp3-map", b"\x00\x00%1\r\n+a\r\n+b\r\n")

# ── fuzz-proxy-header: a load balancer's PROXY header, then the client's bytes (mode byte: the
#    version 2 limit; then cut sizes) ──────────────────────────────────────────────────────────
V2_SIGNATURE = b"\r\n\r\n\x00\r\nQUIT\n"
request = b"GET /db/_blipsync HTTP/1.1\r\nHost: relay\r\nUpgrade: websocket\r\n\r\n"


def proxy_v2(command, family, block):
    return V2_SIGNATURE + bytes([0x20 | command, family]) + struct.pack(">H", len(block)) + block


v4_block = bytes([192, 0, 2, 1, 198, 51, 100, 7]) + struct.pack(">HH", 56324, 4994)
v6_block = (bytes([0x20, 0x01, 0x0d, 0xb8] + [0] * 11 + [1]) + bytes([0x20, 0x01, 0x0d, 0xb8] + [0] * 11 + [2])
            + struct.pack(">HH", 443, 4994))
tlvs = b"\x01\x00\x02h2" + b"\x05\x00\x08uniqueid" + b"\x20\x00\x05\x01\x00\x00\x00\x00"
write("fuzz-proxy-header", "v1-tcp4", b"\x00\x00PROXY TCP4 192.0.2.1 198.51.100.7 56324 4994\r\n" + request)
write("fuzz-proxy-header", "v1-tcp6", b"\x00\x00PROXY TCP6 2001:db8::1 2001:db8::2 443 4994\r\n" + request)
write("fuzz-proxy-header", "v1-unknown", b"\x00\x00PROXY UNKNOWN ffff:f...f:ffff 1.2.3.4 65535 65535\r\n" + request)
write("fuzz-proxy-header", "v1-cut", b"\x00\x04" + b"\x01\x00\x05\x00\x07\x00\x02\x00" + b"PROXY TCP4 10.0.0.1 10.0.0.2 1 2\r\n" + request)
write("fuzz-proxy-header", "v1-lone-lf", b"\x00\x00PROXY TCP4 10.0.0.1 10.0.0.2 1 2\n" + request)
write("fuzz-proxy-header", "v2-tcp4-tlvs", b"\x00\x00" + proxy_v2(1, 0x11, v4_block + tlvs) + request)
write("fuzz-proxy-header", "v2-tcp6", b"\x00\x00" + proxy_v2(1, 0x21, v6_block) + b"\x16\x03\x01\x00\x05hello")
write("fuzz-proxy-header", "v2-local", b"\x00\x00" + proxy_v2(0, 0x00, b"") + request)
write("fuzz-proxy-header", "v2-unspec", b"\x00\x00" + proxy_v2(1, 0x00, b"\x00\x01\x02") + request)
write("fuzz-proxy-header", "v2-udp", b"\x00\x00" + proxy_v2(1, 0x12, v4_block) + request)
write("fuzz-proxy-header", "v2-cut", b"\x00\x03" + b"\x03\x00\x0d\x00\x01\x00" + proxy_v2(1, 0x11, v4_block) + request)
write("fuzz-proxy-header", "v2-over-limit", b"\x02\x00" + proxy_v2(1, 0x21, v6_block + tlvs) + request)
write("fuzz-proxy-header", "no-header", b"\x00\x00" + request)
