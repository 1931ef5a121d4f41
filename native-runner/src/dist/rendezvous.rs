//! The rendezvous: rank 0 listens at `MASTER_ADDR:MASTER_PORT`, every other rank connects, and
//! every rank leaves with the bytes rank 0 made from every rank's hello.
//!
//! The protocol (version [`PROTOCOL_VERSION`]): every frame is a 20-byte header (magic `BLRV`,
//! version u16, kind u16, world size u32, sender's rank u32, payload length u32; big-endian)
//! and at most [`MAX_PAYLOAD_BYTES`] of payload. Rank 0 listens; every other rank connects
//! (retrying with backoff) and sends `Hello` with its own bytes; once all ranks said hello,
//! rank 0 turns the hellos into the payload and sends it (`Payload`), every rank answers `Ack`,
//! and rank 0 sends `Done` once all acknowledged: a rank that returns knows that every rank
//! holds the payload. A wrong peer, world size, rank, version or a cut connection is a named
//! [`RendezvousError`]; rank 0 sends its error to every connected rank (`Abort`) so that all of
//! them stop with the same message; nothing waits past the caller's timeout.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use crate::launcher::RankInfo;

/// First bytes of every frame.
pub const MAGIC: [u8; 4] = *b"BLRV";
/// Version of the frame layout and exchange; peers must agree.
pub const PROTOCOL_VERSION: u16 = 1;
/// Bytes of a frame header.
pub const HEADER_BYTES: usize = 20;
/// Largest payload a frame may carry, bytes.
pub const MAX_PAYLOAD_BYTES: u32 = 1 << 20;

/// What a frame says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A rank joins, with its own bytes.
    Hello,
    /// Rank 0's payload.
    Payload,
    /// A rank holds the payload.
    Ack,
    /// Every rank holds the payload: the rendezvous is over.
    Done,
    /// Rank 0 gives up; the payload is its reason as UTF-8.
    Abort,
}

impl Kind {
    const ALL: [Kind; 5] = [
        Kind::Hello,
        Kind::Payload,
        Kind::Ack,
        Kind::Done,
        Kind::Abort,
    ];

    fn code(self) -> u16 {
        match self {
            Kind::Hello => 1,
            Kind::Payload => 2,
            Kind::Ack => 3,
            Kind::Done => 4,
            Kind::Abort => 5,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Hello => "hello",
            Kind::Payload => "payload",
            Kind::Ack => "ack",
            Kind::Done => "done",
            Kind::Abort => "abort",
        }
    }
}

/// One message of the rendezvous.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// What it says.
    pub kind: Kind,
    /// The sender's world size.
    pub world_size: u32,
    /// The sender's rank.
    pub rank: u32,
    /// Its bytes (at most [`MAX_PAYLOAD_BYTES`]).
    pub payload: Vec<u8>,
}

impl Frame {
    /// Header and payload as sent on the wire.
    ///
    /// # Errors
    /// A payload over [`MAX_PAYLOAD_BYTES`].
    pub fn encode(&self) -> Result<Vec<u8>, FrameError> {
        let len = u32::try_from(self.payload.len())
            .ok()
            .filter(|&n| n <= MAX_PAYLOAD_BYTES)
            .ok_or(FrameError::TooLarge {
                payload_bytes: self.payload.len() as u64,
            })?;
        let mut out = Vec::with_capacity(HEADER_BYTES + self.payload.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&PROTOCOL_VERSION.to_be_bytes());
        out.extend_from_slice(&self.kind.code().to_be_bytes());
        out.extend_from_slice(&self.world_size.to_be_bytes());
        out.extend_from_slice(&self.rank.to_be_bytes());
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(&self.payload);
        Ok(out)
    }
}

/// Why a frame could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// The peer closed the connection in the middle of a frame (or before one).
    ShortRead {
        /// `header` or `payload`.
        part: &'static str,
        /// Bytes that arrived.
        got_bytes: usize,
        /// Bytes the part has.
        expected_bytes: usize,
    },
    /// The first bytes are not [`MAGIC`]: the peer is not a bubblelab rendezvous.
    BadMagic {
        /// The bytes that arrived where the magic belongs (up to 4).
        got: Vec<u8>,
    },
    /// The peer speaks another protocol version.
    Version {
        /// The peer's version.
        got: u16,
    },
    /// A kind code this version does not know.
    UnknownKind {
        /// The code.
        code: u16,
    },
    /// A payload longer than [`MAX_PAYLOAD_BYTES`].
    TooLarge {
        /// Its length, bytes.
        payload_bytes: u64,
    },
    /// Nothing (or not all) arrived before the deadline.
    TimedOut,
    /// The socket failed.
    Io(String),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::ShortRead {
                part,
                got_bytes,
                expected_bytes,
            } => write!(
                f,
                "connection closed after {got_bytes} of the {expected_bytes} {part} bytes of a frame"
            ),
            FrameError::BadMagic { got } => {
                let hex: Vec<String> = got.iter().map(|b| format!("{b:02x}")).collect();
                write!(
                    f,
                    "not a bubblelab rendezvous peer: expected the magic bytes `BLRV`, got {} ({:?})",
                    hex.join(" "),
                    String::from_utf8_lossy(got)
                )
            }
            FrameError::Version { got } => write!(
                f,
                "speaks rendezvous protocol version {got}, this bubblelab speaks {PROTOCOL_VERSION}: \
                 run the same bubblelab build on every rank"
            ),
            FrameError::UnknownKind { code } => write!(f, "unknown frame kind {code}"),
            FrameError::TooLarge { payload_bytes } => write!(
                f,
                "frame payload of {payload_bytes} bytes is over the limit of {MAX_PAYLOAD_BYTES}"
            ),
            FrameError::TimedOut => f.write_str("timed out"),
            FrameError::Io(e) => f.write_str(e),
        }
    }
}

/// Reads until `buf` is full or the peer closes; returns the bytes read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> Result<usize, FrameError> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Err(FrameError::TimedOut)
            }
            Err(e) => return Err(FrameError::Io(e.to_string())),
        }
    }
    Ok(got)
}

/// Reads one frame.
///
/// # Errors
/// Every way a frame can be wrong, by name ([`FrameError`]); a wrong magic is reported as
/// soon as the bytes that arrived differ from it, even if fewer than a header arrived.
pub fn read_frame(r: &mut impl Read) -> Result<Frame, FrameError> {
    let mut header = [0u8; HEADER_BYTES];
    let got = read_full(r, &mut header)?;
    let magic_seen = got.min(MAGIC.len());
    if header[..magic_seen] != MAGIC[..magic_seen] {
        return Err(FrameError::BadMagic {
            got: header[..magic_seen].to_vec(),
        });
    }
    if got < HEADER_BYTES {
        return Err(FrameError::ShortRead {
            part: "header",
            got_bytes: got,
            expected_bytes: HEADER_BYTES,
        });
    }
    let u16_at = |i: usize| u16::from_be_bytes([header[i], header[i + 1]]);
    let u32_at =
        |i: usize| u32::from_be_bytes([header[i], header[i + 1], header[i + 2], header[i + 3]]);
    let version = u16_at(4);
    if version != PROTOCOL_VERSION {
        return Err(FrameError::Version { got: version });
    }
    let code = u16_at(6);
    let kind = Kind::ALL
        .into_iter()
        .find(|k| k.code() == code)
        .ok_or(FrameError::UnknownKind { code })?;
    let len = u32_at(16);
    if len > MAX_PAYLOAD_BYTES {
        return Err(FrameError::TooLarge {
            payload_bytes: u64::from(len),
        });
    }
    let mut payload = vec![0u8; len as usize];
    let got = read_full(r, &mut payload)?;
    if got < payload.len() {
        return Err(FrameError::ShortRead {
            part: "payload",
            got_bytes: got,
            expected_bytes: payload.len(),
        });
    }
    Ok(Frame {
        kind,
        world_size: u32_at(8),
        rank: u32_at(12),
        payload,
    })
}

/// Where and how long to meet.
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// This process's rank.
    pub rank: u32,
    /// Number of ranks.
    pub world_size: u32,
    /// Host name or address of rank 0.
    pub master_addr: String,
    /// TCP port rank 0 listens on.
    pub master_port: u16,
    /// How long the whole rendezvous may take on this rank.
    pub timeout: Duration,
}

impl Endpoint {
    /// The endpoint of the launcher's rank.
    ///
    /// # Errors
    /// No rendezvous address (the message says what to set for this launcher).
    pub fn from_rank_info(info: &RankInfo, timeout: Duration) -> Result<Endpoint, String> {
        let m = info.master()?;
        Ok(Endpoint {
            rank: info.rank,
            world_size: info.world_size,
            master_addr: m.addr.clone(),
            master_port: m.port,
            timeout,
        })
    }

    /// `host:port` of rank 0 (IPv6 addresses in brackets).
    pub fn master(&self) -> String {
        if self.master_addr.contains(':') {
            format!("[{}]:{}", self.master_addr, self.master_port)
        } else {
            format!("{}:{}", self.master_addr, self.master_port)
        }
    }
}

/// Why the rendezvous failed.
#[derive(Clone, Debug, PartialEq)]
pub enum RendezvousError {
    /// The endpoint itself is wrong (world size 0, rank not below it, hello too large).
    Config(String),
    /// `MASTER_ADDR` does not resolve.
    Resolve {
        /// `host:port`.
        master: String,
        /// The resolver's answer.
        reason: String,
    },
    /// Rank 0 cannot listen.
    Listen {
        /// The address it tried.
        addr: String,
        /// The socket's answer.
        reason: String,
    },
    /// A rank could not reach rank 0 before its deadline.
    Connect {
        /// `host:port`.
        master: String,
        /// The timeout, s.
        timeout_s: f64,
        /// The last connection error.
        last_error: String,
    },
    /// Rank 0's deadline passed before every rank joined.
    Missing {
        /// The ranks that never said hello.
        missing: Vec<u32>,
        /// Number of ranks.
        world_size: u32,
        /// The timeout, s.
        timeout_s: f64,
    },
    /// A frame from `peer` was wrong or did not come.
    Frame {
        /// Who sent it (an address, and the rank where known).
        peer: String,
        /// What was awaited.
        awaiting: String,
        /// What went wrong.
        error: FrameError,
    },
    /// `peer` sent nothing (or not all of a frame) before this rank's deadline.
    TimedOut {
        /// Who was to send.
        peer: String,
        /// What was awaited.
        awaiting: String,
        /// The timeout, s.
        timeout_s: f64,
    },
    /// A well-formed frame that does not fit the exchange.
    Protocol {
        /// Who sent it.
        peer: String,
        /// What is wrong.
        message: String,
    },
    /// Two processes claim the same rank.
    DuplicateRank {
        /// The rank.
        rank: u32,
        /// Where the first claim came from.
        first: String,
        /// Where the second came from.
        second: String,
    },
    /// Rank 0 could not make the payload (its reason).
    Root(String),
    /// Rank 0 gave up and said why (seen on the other ranks).
    Aborted(String),
    /// A socket call failed.
    Io {
        /// Who the socket talks to.
        peer: String,
        /// The error.
        reason: String,
    },
}

pub(crate) fn list_ranks(ranks: &[u32]) -> String {
    let shown: Vec<String> = ranks.iter().take(16).map(u32::to_string).collect();
    let more = ranks.len().saturating_sub(16);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

impl fmt::Display for RendezvousError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RendezvousError::Config(m) | RendezvousError::Root(m) => f.write_str(m),
            RendezvousError::Resolve { master, reason } => {
                write!(f, "cannot resolve the rendezvous address {master}: {reason}")
            }
            RendezvousError::Listen { addr, reason } => write!(
                f,
                "rank 0 cannot listen on {addr}: {reason} (is MASTER_PORT used by another job?)"
            ),
            RendezvousError::Connect {
                master,
                timeout_s,
                last_error,
            } => write!(
                f,
                "could not reach rank 0 at {master} within {timeout_s} s (last error: {last_error}): \
                 is rank 0 running, and is MASTER_ADDR its address?"
            ),
            RendezvousError::Missing {
                missing,
                world_size,
                timeout_s,
            } => write!(
                f,
                "timed out after {timeout_s} s waiting for rank{} {} to join ({} of {world_size} \
                 ranks arrived)",
                if missing.len() == 1 { "" } else { "s" },
                list_ranks(missing),
                *world_size as usize - missing.len()
            ),
            RendezvousError::Frame {
                peer,
                awaiting,
                error,
            } => write!(f, "{peer}, awaiting {awaiting}: {error}"),
            RendezvousError::TimedOut {
                peer,
                awaiting,
                timeout_s,
            } => write!(f, "timed out after {timeout_s} s awaiting {awaiting} from {peer}"),
            RendezvousError::Protocol { peer, message } => write!(f, "{peer}: {message}"),
            RendezvousError::DuplicateRank {
                rank,
                first,
                second,
            } => write!(
                f,
                "rank {rank} joined twice (from {first} and from {second}): two processes were \
                 given the same rank"
            ),
            RendezvousError::Aborted(reason) => {
                write!(f, "rank 0 stopped the rendezvous: {reason}")
            }
            RendezvousError::Io { peer, reason } => write!(f, "{peer}: {reason}"),
        }
    }
}

/// A reader that never waits past `deadline`.
struct DeadlineReader<'a> {
    stream: &'a TcpStream,
    deadline: Instant,
}

impl Read for DeadlineReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        self.stream.set_read_timeout(Some(left))?;
        (&mut &*self.stream).read(buf)
    }
}

fn timeout_s(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// A connected rank, seen from rank 0.
struct Peer {
    stream: TcpStream,
    /// Its address.
    addr: SocketAddr,
    /// `rank R at ADDR`.
    name: String,
}

fn send(
    stream: &TcpStream,
    peer: &str,
    deadline: Instant,
    frame: &Frame,
) -> Result<(), RendezvousError> {
    let bytes = frame.encode().map_err(|error| RendezvousError::Frame {
        peer: peer.to_string(),
        awaiting: format!("our {} to be sent", frame.kind.name()),
        error,
    })?;
    let left = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1));
    stream
        .set_write_timeout(Some(left))
        .and_then(|()| (&mut &*stream).write_all(&bytes))
        .map_err(|e| RendezvousError::Io {
            peer: peer.to_string(),
            reason: format!("sending {}: {e}", frame.kind.name()),
        })
}

fn receive(
    ep: &Endpoint,
    stream: &TcpStream,
    peer: &str,
    deadline: Instant,
    awaiting: &str,
) -> Result<Frame, RendezvousError> {
    read_frame(&mut DeadlineReader { stream, deadline }).map_err(|error| match error {
        FrameError::TimedOut => RendezvousError::TimedOut {
            peer: peer.to_string(),
            awaiting: awaiting.to_string(),
            timeout_s: timeout_s(ep.timeout),
        },
        error => RendezvousError::Frame {
            peer: peer.to_string(),
            awaiting: awaiting.to_string(),
            error,
        },
    })
}

fn resolve(ep: &Endpoint) -> Result<Vec<SocketAddr>, RendezvousError> {
    let fail = |reason: String| RendezvousError::Resolve {
        master: ep.master(),
        reason,
    };
    let addrs: Vec<SocketAddr> = (ep.master_addr.as_str(), ep.master_port)
        .to_socket_addrs()
        .map_err(|e| fail(e.to_string()))?
        .collect();
    if addrs.is_empty() {
        return Err(fail("no address".into()));
    }
    Ok(addrs)
}

/// Meets every other rank: returns rank 0's payload, made by `root` on rank 0 from every rank's
/// `hello` (indexed by rank). A world of one rank meets no one and calls `root` at once.
///
/// Rank 0 listens on every interface at `master_port` (IPv4 when `master_addr` has an IPv4
/// address, else IPv6), so that `MASTER_ADDR` may be any of its names.
///
/// # Errors
/// A [`RendezvousError`] naming the rank, peer and frame at fault; each rank gives up at its
/// `timeout` at the latest.
pub fn rendezvous<F>(ep: &Endpoint, hello: &[u8], root: F) -> Result<Vec<u8>, RendezvousError>
where
    F: FnOnce(&[Vec<u8>]) -> Result<Vec<u8>, String>,
{
    if ep.world_size == 0 || ep.rank >= ep.world_size {
        return Err(RendezvousError::Config(format!(
            "rank {} must be below the world size {}",
            ep.rank, ep.world_size
        )));
    }
    if hello.len() > MAX_PAYLOAD_BYTES as usize {
        return Err(RendezvousError::Config(format!(
            "hello of {} bytes is over the limit of {MAX_PAYLOAD_BYTES}",
            hello.len()
        )));
    }
    let deadline = Instant::now() + ep.timeout;
    if ep.world_size == 1 {
        return root(&[hello.to_vec()]).map_err(RendezvousError::Root);
    }
    if ep.rank == 0 {
        serve(ep, hello, root, deadline)
    } else {
        join(ep, hello, deadline)
    }
}

fn serve<F>(
    ep: &Endpoint,
    hello: &[u8],
    root: F,
    deadline: Instant,
) -> Result<Vec<u8>, RendezvousError>
where
    F: FnOnce(&[Vec<u8>]) -> Result<Vec<u8>, String>,
{
    let addrs = resolve(ep)?;
    let any: IpAddr = if addrs.iter().any(SocketAddr::is_ipv4) {
        Ipv4Addr::UNSPECIFIED.into()
    } else {
        Ipv6Addr::UNSPECIFIED.into()
    };
    let bind = SocketAddr::new(any, ep.master_port);
    let listener = TcpListener::bind(bind)
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .map_err(|e| RendezvousError::Listen {
            addr: bind.to_string(),
            reason: e.to_string(),
        })?;
    let world = ep.world_size as usize;
    let mut peers: Vec<Option<Peer>> = (0..world).map(|_| None).collect();
    let mut hellos: Vec<Vec<u8>> = vec![Vec::new(); world];
    hellos[0] = hello.to_vec();
    let result = meet_all(ep, &listener, &mut peers, &mut hellos, deadline).and_then(|()| {
        let payload = root(&hellos).map_err(RendezvousError::Root)?;
        let frame = |kind, payload| Frame {
            kind,
            world_size: ep.world_size,
            rank: 0,
            payload,
        };
        let payload_frame = frame(Kind::Payload, payload);
        for p in peers.iter().flatten() {
            send(&p.stream, &p.name, deadline, &payload_frame)?;
        }
        for p in peers.iter().flatten() {
            let f = receive(ep, &p.stream, &p.name, deadline, "an ack")?;
            expect(&f, Kind::Ack, &p.name)?;
        }
        let done = frame(Kind::Done, Vec::new());
        for p in peers.iter().flatten() {
            send(&p.stream, &p.name, deadline, &done)?;
        }
        Ok(payload_frame.payload)
    });
    if let Err(e) = &result {
        abort_all(ep, peers.iter().flatten().map(|p| &p.stream), e);
    }
    result
}

/// Tells every connected rank why rank 0 gives up; best effort, a second at most each.
fn abort_all<'a>(ep: &Endpoint, streams: impl Iterator<Item = &'a TcpStream>, e: &RendezvousError) {
    let mut reason = e.to_string();
    reason.truncate(MAX_PAYLOAD_BYTES as usize / 2);
    let frame = Frame {
        kind: Kind::Abort,
        world_size: ep.world_size,
        rank: 0,
        payload: reason.into_bytes(),
    };
    let soon = Instant::now() + Duration::from_secs(1);
    for s in streams {
        let _ = send(s, "", soon, &frame);
    }
}

fn expect(f: &Frame, kind: Kind, peer: &str) -> Result<(), RendezvousError> {
    if f.kind == kind {
        Ok(())
    } else {
        Err(RendezvousError::Protocol {
            peer: peer.to_string(),
            message: format!("expected a {} frame, got {}", kind.name(), f.kind.name()),
        })
    }
}

/// Rank 0: accepts connections until every rank said hello or the deadline passes.
fn meet_all(
    ep: &Endpoint,
    listener: &TcpListener,
    peers: &mut [Option<Peer>],
    hellos: &mut [Vec<u8>],
    deadline: Instant,
) -> Result<(), RendezvousError> {
    let mut joined = 1;
    while joined < ep.world_size {
        let (stream, addr) = match listener.accept() {
            Ok(s) => s,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(RendezvousError::Missing {
                        missing: (1..ep.world_size)
                            .filter(|&r| peers[r as usize].is_none())
                            .collect(),
                        world_size: ep.world_size,
                        timeout_s: timeout_s(ep.timeout),
                    });
                }
                std::thread::sleep(Duration::from_millis(5));
                continue;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(RendezvousError::Io {
                    peer: "rank 0's listener".into(),
                    reason: e.to_string(),
                })
            }
        };
        let from = format!("a connection from {addr}");
        let admitted = stream
            .set_nonblocking(false)
            .map_err(|e| RendezvousError::Io {
                peer: from.clone(),
                reason: e.to_string(),
            })
            .and_then(|()| {
                let _ = stream.set_nodelay(true);
                let f = receive(ep, &stream, &from, deadline, "a hello")?;
                admit(ep, &f, addr, peers).map(|rank| (rank, f.payload))
            });
        match admitted {
            Ok((rank, hello)) => {
                hellos[rank as usize] = hello;
                peers[rank as usize] = Some(Peer {
                    stream,
                    addr,
                    name: format!("rank {rank} at {addr}"),
                });
                joined += 1;
            }
            Err(e) => {
                abort_all(ep, std::iter::once(&stream), &e);
                return Err(e);
            }
        }
    }
    Ok(())
}

/// Checks a hello against this job; returns the sender's rank.
fn admit(
    ep: &Endpoint,
    f: &Frame,
    addr: SocketAddr,
    peers: &[Option<Peer>],
) -> Result<u32, RendezvousError> {
    let from = format!("a connection from {addr}");
    expect(f, Kind::Hello, &from)?;
    let protocol = |message: String| RendezvousError::Protocol {
        peer: from.clone(),
        message,
    };
    if f.world_size != ep.world_size {
        return Err(protocol(format!(
            "rank {} says the world has {} ranks, rank 0 says {}: the ranks were launched with \
             different world sizes",
            f.rank, f.world_size, ep.world_size
        )));
    }
    if f.rank >= ep.world_size {
        return Err(protocol(format!(
            "rank {} is not below the world size {}",
            f.rank, ep.world_size
        )));
    }
    if f.rank == 0 {
        return Err(RendezvousError::DuplicateRank {
            rank: 0,
            first: "rank 0 itself, the listener".into(),
            second: addr.to_string(),
        });
    }
    if let Some(first) = &peers[f.rank as usize] {
        return Err(RendezvousError::DuplicateRank {
            rank: f.rank,
            first: first.addr.to_string(),
            second: addr.to_string(),
        });
    }
    Ok(f.rank)
}

/// Connects to rank 0, retrying with backoff (10 ms doubling to 0.5 s) until the deadline.
fn connect(ep: &Endpoint, deadline: Instant) -> Result<TcpStream, RendezvousError> {
    let mut backoff = Duration::from_millis(10);
    let mut last_error = String::from("no attempt finished");
    loop {
        match resolve(ep) {
            Ok(addrs) => {
                for a in addrs {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    match TcpStream::connect_timeout(&a, left.min(Duration::from_secs(2))) {
                        Ok(s) => return Ok(s),
                        Err(e) => last_error = format!("{a}: {e}"),
                    }
                }
            }
            Err(e) => last_error = e.to_string(),
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(RendezvousError::Connect {
                master: ep.master(),
                timeout_s: timeout_s(ep.timeout),
                last_error,
            });
        }
        std::thread::sleep(backoff.min(left));
        backoff = (backoff * 2).min(Duration::from_millis(500));
    }
}

/// A rank other than 0: hello, payload, ack, done.
fn join(ep: &Endpoint, hello: &[u8], deadline: Instant) -> Result<Vec<u8>, RendezvousError> {
    let stream = connect(ep, deadline)?;
    let _ = stream.set_nodelay(true);
    let peer = format!("rank 0 at {}", ep.master());
    let frame = |kind, payload| Frame {
        kind,
        world_size: ep.world_size,
        rank: ep.rank,
        payload,
    };
    send(
        &stream,
        &peer,
        deadline,
        &frame(Kind::Hello, hello.to_vec()),
    )?;
    let awaiting = format!(
        "the payload (rank 0 sends it once all {} ranks joined)",
        ep.world_size
    );
    let payload = from_root(ep, &stream, &peer, deadline, Kind::Payload, &awaiting)?;
    send(&stream, &peer, deadline, &frame(Kind::Ack, Vec::new()))?;
    from_root(
        ep,
        &stream,
        &peer,
        deadline,
        Kind::Done,
        "the end of the rendezvous",
    )?;
    Ok(payload)
}

/// Reads rank 0's next frame: `kind`, or its abort as [`RendezvousError::Aborted`].
fn from_root(
    ep: &Endpoint,
    stream: &TcpStream,
    peer: &str,
    deadline: Instant,
    kind: Kind,
    awaiting: &str,
) -> Result<Vec<u8>, RendezvousError> {
    let f = receive(ep, stream, peer, deadline, awaiting)?;
    if f.kind == Kind::Abort {
        return Err(RendezvousError::Aborted(
            String::from_utf8_lossy(&f.payload).into_owned(),
        ));
    }
    expect(&f, kind, peer)?;
    if f.rank != 0 || f.world_size != ep.world_size {
        return Err(RendezvousError::Protocol {
            peer: peer.to_string(),
            message: format!(
                "the listener says it is rank {} of {}, this rank expects rank 0 of {}",
                f.rank, f.world_size, ep.world_size
            ),
        });
    }
    Ok(f.payload)
}

/// 64-bit FNV-1a of `bytes`: a short fingerprint to compare payloads across ranks by eye.
#[must_use]
pub fn fingerprint(bytes: &[u8]) -> u64 {
    crate::checkpoint::image::fnv64(bytes)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::thread;

    fn frame(kind: Kind, rank: u32, payload: &[u8]) -> Frame {
        Frame {
            kind,
            world_size: 4,
            rank,
            payload: payload.to_vec(),
        }
    }

    fn read(bytes: &[u8]) -> Result<Frame, FrameError> {
        read_frame(&mut &bytes[..])
    }

    #[test]
    fn frames_round_trip() {
        for kind in Kind::ALL {
            let f = frame(kind, 3, b"\x00\x01 payload");
            let bytes = f.encode().unwrap();
            assert_eq!(bytes.len(), HEADER_BYTES + 10);
            assert_eq!(&bytes[..4], b"BLRV");
            assert_eq!(read(&bytes).unwrap(), f);
        }
        // Two frames back to back on one stream.
        let mut bytes = frame(Kind::Hello, 1, b"a").encode().unwrap();
        bytes.extend(frame(Kind::Done, 0, b"").encode().unwrap());
        let mut r = &bytes[..];
        assert_eq!(read_frame(&mut r).unwrap().kind, Kind::Hello);
        assert_eq!(read_frame(&mut r).unwrap().kind, Kind::Done);
    }

    #[test]
    fn every_bad_frame_is_named() {
        let good = frame(Kind::Payload, 0, &[7; 32]).encode().unwrap();
        assert_eq!(
            read(b""),
            Err(FrameError::ShortRead {
                part: "header",
                got_bytes: 0,
                expected_bytes: 20
            })
        );
        assert_eq!(
            read(&good[..11]),
            Err(FrameError::ShortRead {
                part: "header",
                got_bytes: 11,
                expected_bytes: 20
            })
        );
        assert_eq!(
            read(&good[..good.len() - 5]),
            Err(FrameError::ShortRead {
                part: "payload",
                got_bytes: 27,
                expected_bytes: 32
            })
        );
        let http = read(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap_err();
        assert_eq!(
            http,
            FrameError::BadMagic {
                got: b"GET ".to_vec()
            }
        );
        assert!(http.to_string().contains("not a bubblelab rendezvous peer"));
        // A wrong magic is named even when the peer sent fewer bytes than a header.
        assert_eq!(
            read(b"hi"),
            Err(FrameError::BadMagic {
                got: b"hi".to_vec()
            })
        );
        let mut v2 = good.clone();
        v2[5] = 2;
        assert_eq!(read(&v2), Err(FrameError::Version { got: 2 }));
        assert!(FrameError::Version { got: 2 }
            .to_string()
            .contains("version 2, this bubblelab speaks 1"));
        let mut kind = good.clone();
        kind[7] = 9;
        assert_eq!(read(&kind), Err(FrameError::UnknownKind { code: 9 }));
        let mut huge = good.clone();
        huge[16..20].copy_from_slice(&(MAX_PAYLOAD_BYTES + 1).to_be_bytes());
        assert_eq!(
            read(&huge),
            Err(FrameError::TooLarge {
                payload_bytes: u64::from(MAX_PAYLOAD_BYTES) + 1
            })
        );
        let over = frame(Kind::Payload, 0, &vec![0; MAX_PAYLOAD_BYTES as usize + 1]);
        assert!(matches!(over.encode(), Err(FrameError::TooLarge { .. })));
    }

    /// A port free now and never handed to another test of this process: tests run in
    /// parallel, and a port released by one could otherwise be given to the next.
    pub(crate) fn free_port() -> u16 {
        static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
        let mut given = GIVEN.lock().unwrap();
        loop {
            let port = TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            if !given.contains(&port) {
                given.push(port);
                return port;
            }
        }
    }

    fn endpoint(rank: u32, world_size: u32, port: u16, timeout_ms: u64) -> Endpoint {
        Endpoint {
            rank,
            world_size,
            master_addr: "127.0.0.1".into(),
            master_port: port,
            timeout: Duration::from_millis(timeout_ms),
        }
    }

    /// Rank 0's payload: every hello in rank order, joined by `|`.
    #[allow(clippy::unnecessary_wraps)] // the rendezvous' payload callback returns a Result
    fn joined(hellos: &[Vec<u8>]) -> Result<Vec<u8>, String> {
        Ok(hellos.join(&b'|'))
    }

    fn client(
        rank: u32,
        world: u32,
        port: u16,
        timeout_ms: u64,
    ) -> thread::JoinHandle<Result<Vec<u8>, RendezvousError>> {
        thread::spawn(move || {
            rendezvous(
                &endpoint(rank, world, port, timeout_ms),
                format!("r{rank}").as_bytes(),
                joined,
            )
        })
    }

    #[test]
    fn all_ranks_meet_and_agree() {
        let port = free_port();
        // The clients start before rank 0 listens: they retry.
        let clients: Vec<_> = (1..4).map(|r| client(r, 4, port, 10_000)).collect();
        thread::sleep(Duration::from_millis(50));
        let root = rendezvous(&endpoint(0, 4, port, 10_000), b"r0", joined).unwrap();
        assert_eq!(root, b"r0|r1|r2|r3");
        for c in clients {
            assert_eq!(c.join().unwrap().unwrap(), root);
        }
    }

    #[test]
    fn one_rank_meets_no_one() {
        let e = endpoint(0, 1, 1, 10);
        assert_eq!(rendezvous(&e, b"x", joined).unwrap(), b"x");
        assert!(matches!(
            rendezvous(&endpoint(2, 2, 1, 10), b"", joined),
            Err(RendezvousError::Config(_))
        ));
    }

    #[test]
    fn a_missing_rank_times_out_on_every_rank() {
        let port = free_port();
        let started = Instant::now();
        let c = client(1, 3, port, 600);
        let root = rendezvous(&endpoint(0, 3, port, 600), b"r0", joined).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(3));
        assert_eq!(
            root,
            RendezvousError::Missing {
                missing: vec![2],
                world_size: 3,
                timeout_s: 0.6
            }
        );
        assert_eq!(
            root.to_string(),
            "timed out after 0.6 s waiting for rank 2 to join (2 of 3 ranks arrived)"
        );
        // Rank 1 either hears rank 0's abort or reaches its own deadline first.
        match c.join().unwrap().unwrap_err() {
            RendezvousError::Aborted(m) => assert!(m.contains("waiting for rank 2"), "{m}"),
            RendezvousError::TimedOut { awaiting, .. } => {
                assert!(awaiting.contains("once all 3 ranks joined"), "{awaiting}");
            }
            e => panic!("unexpected {e}"),
        }
        assert!(started.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn no_rank_0_is_a_connect_error() {
        // Port 1 (tcpmux) is closed on any machine that runs these tests.
        let port = 1;
        let started = Instant::now();
        let e = rendezvous(&endpoint(1, 2, port, 300), b"", joined).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(3));
        let RendezvousError::Connect { last_error, .. } = &e else {
            panic!("unexpected {e}");
        };
        assert!(last_error.contains(&port.to_string()), "{e}");
        assert!(e.to_string().contains("could not reach rank 0"), "{e}");
    }

    #[test]
    fn a_duplicate_rank_stops_everyone() {
        let port = free_port();
        let root = thread::spawn(move || rendezvous(&endpoint(0, 3, port, 5_000), b"", joined));
        let first = client(1, 3, port, 5_000);
        thread::sleep(Duration::from_millis(200));
        let second = client(1, 3, port, 5_000);
        let e = root.join().unwrap().unwrap_err();
        assert!(
            matches!(e, RendezvousError::DuplicateRank { rank: 1, .. }),
            "{e}"
        );
        assert!(e.to_string().contains("rank 1 joined twice"), "{e}");
        for c in [first, second] {
            let e = c.join().unwrap().unwrap_err();
            assert!(
                matches!(&e, RendezvousError::Aborted(m) if m.contains("joined twice")),
                "{e}"
            );
        }
    }

    #[test]
    fn a_second_rank_0_is_named() {
        let port = free_port();
        let root = thread::spawn(move || rendezvous(&endpoint(0, 2, port, 5_000), b"", joined));
        thread::sleep(Duration::from_millis(100));
        // A rank 0 that does not listen (the port is taken) cannot be made through the API:
        // send its hello by hand.
        let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        (&s).write_all(
            &Frame {
                kind: Kind::Hello,
                world_size: 2,
                rank: 0,
                payload: vec![],
            }
            .encode()
            .unwrap(),
        )
        .unwrap();
        let e = root.join().unwrap().unwrap_err();
        assert!(
            matches!(e, RendezvousError::DuplicateRank { rank: 0, .. }),
            "{e}"
        );
    }

    #[test]
    fn different_world_sizes_are_named_on_both_sides() {
        let port = free_port();
        let root = thread::spawn(move || rendezvous(&endpoint(0, 2, port, 5_000), b"", joined));
        let e = client(1, 3, port, 5_000).join().unwrap().unwrap_err();
        assert!(
            matches!(&e, RendezvousError::Aborted(m) if m.contains("rank 1 says the world has 3 ranks, rank 0 says 2")),
            "{e}"
        );
        let e = root.join().unwrap().unwrap_err();
        assert!(e.to_string().contains("different world sizes"), "{e}");
    }

    #[test]
    fn a_rank_beyond_the_world_is_named() {
        let port = free_port();
        let root = thread::spawn(move || rendezvous(&endpoint(0, 2, port, 5_000), b"", joined));
        thread::sleep(Duration::from_millis(100));
        let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        (&s).write_all(
            &Frame {
                kind: Kind::Hello,
                world_size: 2,
                rank: 5,
                payload: vec![],
            }
            .encode()
            .unwrap(),
        )
        .unwrap();
        let e = root.join().unwrap().unwrap_err();
        assert!(
            e.to_string()
                .contains("rank 5 is not below the world size 2"),
            "{e}"
        );
    }

    #[test]
    fn a_stranger_at_rank_0_is_named() {
        let port = free_port();
        let root = thread::spawn(move || rendezvous(&endpoint(0, 2, port, 5_000), b"", joined));
        thread::sleep(Duration::from_millis(100));
        let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        (&s).write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let e = root.join().unwrap().unwrap_err();
        assert!(
            matches!(
                &e,
                RendezvousError::Frame {
                    error: FrameError::BadMagic { .. },
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("a connection from 127.0.0.1"), "{e}");
        // Another version of bubblelab.
        let port = free_port();
        let root = thread::spawn(move || rendezvous(&endpoint(0, 2, port, 5_000), b"", joined));
        thread::sleep(Duration::from_millis(100));
        let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let mut hello = Frame {
            kind: Kind::Hello,
            world_size: 2,
            rank: 1,
            payload: vec![],
        }
        .encode()
        .unwrap();
        hello[5] = 7;
        (&s).write_all(&hello).unwrap();
        let e = root.join().unwrap().unwrap_err();
        assert!(
            matches!(
                &e,
                RendezvousError::Frame {
                    error: FrameError::Version { got: 7 },
                    ..
                }
            ),
            "{e}"
        );
    }

    /// A server at the master port that is not bubblelab: it reads, answers `reply` and closes.
    fn stranger(reply: &'static [u8]) -> u16 {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        thread::spawn(move || {
            if let Ok((s, _)) = l.accept() {
                // Read the hello first, as a server reads a request: closing a socket with
                // unread data resets the connection instead of closing it.
                let _ = (&s).read(&mut [0u8; HEADER_BYTES]);
                let _ = (&s).write_all(reply);
            }
        });
        port
    }

    #[test]
    fn rank_0_that_is_not_bubblelab_is_named() {
        let port = stranger(b"HTTP/1.1 400 Bad Request\r\n\r\n");
        let e = rendezvous(&endpoint(1, 2, port, 5_000), b"", joined).unwrap_err();
        assert!(
            matches!(&e, RendezvousError::Frame { error: FrameError::BadMagic { got }, .. } if got == b"HTTP"),
            "{e}"
        );
        let port = stranger(b"");
        let e = rendezvous(&endpoint(1, 2, port, 5_000), b"", joined).unwrap_err();
        assert!(
            matches!(
                &e,
                RendezvousError::Frame {
                    error: FrameError::ShortRead { got_bytes: 0, .. },
                    ..
                }
            ),
            "{e}"
        );
        assert!(
            e.to_string()
                .contains("connection closed after 0 of the 20 header bytes"),
            "{e}"
        );
    }

    #[test]
    fn a_root_failure_reaches_every_rank() {
        let port = free_port();
        let c = client(1, 2, port, 5_000);
        let e = rendezvous(&endpoint(0, 2, port, 5_000), b"", |_| {
            Err("no ids today".into())
        })
        .unwrap_err();
        assert_eq!(e, RendezvousError::Root("no ids today".into()));
        assert_eq!(
            c.join().unwrap().unwrap_err(),
            RendezvousError::Aborted("no ids today".into())
        );
    }

    #[test]
    fn fingerprint_is_fnv1a() {
        // FNV-1a 64 test vectors (Fowler, Noll, Vo: "a" and the empty string).
        assert_eq!(fingerprint(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fingerprint(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
