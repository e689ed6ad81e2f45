//! A TCP proxy of the harness's own, one per (candidate, server), to break that candidate's
//! link to that server in the ways a network does:
//!
//! | mode | what the candidate sees |
//! | --- | --- |
//! | `Pass` | a working link |
//! | `Cut` | every open connection closed at once, new ones closed on accept (a reset link, a dead peer) |
//! | `Stall` | connections open but no byte moves either way, closes included (a black hole: a partition, a dead switch); on heal the held bytes flow again, late, in order |
//! | `Delay(ms)` | every chunk held `ms` milliseconds in each direction (a slow link) |
//! | `Lossy(‰)` | each chunk, with that chance, held 200–800 ms: how TCP shows lost packets to a program (a retransmission after a timeout), never as missing or corrupt bytes |
//!
//! Bytes are never reordered or altered: the proxy only delays, holds and closes, as TCP does.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::time::{sleep_until, Instant};

use crate::rng::Rng;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Pass,
    Cut,
    Stall,
    Delay { one_way_ms: u64 },
    Lossy { permille: u32 },
}

pub struct Proxy {
    pub addr: SocketAddr,
    pub upstream: SocketAddr,
    mode: watch::Sender<Mode>,
    /// Bumped to close every open connection.
    generation: watch::Sender<u64>,
    connections: Arc<AtomicU64>,
}

impl Proxy {
    /// Listens on a free loopback port and forwards to `upstream`. `seed` drives `Lossy`.
    pub async fn start(upstream: SocketAddr, seed: u64) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let (mode, _) = watch::channel(Mode::Pass);
        let (generation, _) = watch::channel(0u64);
        let connections = Arc::new(AtomicU64::new(0));
        let (mode2, gen2, count2) = (mode.clone(), generation.clone(), connections.clone());
        tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else { return };
                if *mode2.borrow() == Mode::Cut {
                    drop(client);
                    continue;
                }
                let n = count2.fetch_add(1, Ordering::Relaxed);
                let _ = client.set_nodelay(true);
                let mode_rx = mode2.subscribe();
                let mut gen_rx = gen2.subscribe();
                gen_rx.borrow_and_update();
                tokio::spawn(async move {
                    let connect = tokio::time::timeout(Duration::from_secs(2), TcpStream::connect(upstream));
                    let Ok(Ok(server)) = connect.await else { return };
                    let _ = server.set_nodelay(true);
                    let (cr, cw) = client.into_split();
                    let (sr, sw) = server.into_split();
                    let up = pump(cr, sw, mode_rx.clone(), Rng::new(seed ^ (n << 1)));
                    let down = pump(sr, cw, mode_rx, Rng::new(seed ^ (n << 1) ^ 1));
                    tokio::select! {
                        _ = async { tokio::join!(up, down) } => {}
                        _ = gen_rx.changed() => {}
                    }
                });
            }
        });
        Ok(Proxy { addr, upstream, mode, generation, connections })
    }

    pub fn mode(&self) -> Mode { *self.mode.borrow() }

    /// Switches the mode; `Cut` also closes every open connection.
    pub fn set_mode(&self, mode: Mode) {
        self.mode.send_replace(mode);
        if mode == Mode::Cut {
            self.generation.send_modify(|g| *g += 1);
        }
    }

    /// Back to a working link.
    pub fn heal(&self) { self.set_mode(Mode::Pass); }

    /// How many connections were accepted so far.
    pub fn connections(&self) -> u64 { self.connections.load(Ordering::Relaxed) }

    /// `url` (`mysql://user:pass@host:port/db?...`) with host:port replaced by the proxy's.
    pub fn url_for(&self, url: &str) -> String { replace_host(url, &self.addr.to_string()) }
}

/// `url` with its host:port replaced; `prefer_socket=false` keeps mysql_async from moving to the
/// server's unix socket (around the proxy) when the host is on loopback.
pub fn replace_host(url: &str, hostport: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("a URL with ://");
    let (creds, hostpath) = match rest.rsplit_once('@') {
        Some((c, h)) => (format!("{c}@"), h),
        None => (String::new(), rest),
    };
    let path = hostpath.find('/').map(|i| &hostpath[i..]).unwrap_or("");
    let sep = if path.contains('?') { '&' } else { '?' };
    format!("{scheme}://{creds}{hostport}{path}{sep}prefer_socket=false")
}

/// The host:port of a `mysql://` URL.
pub fn server_addr(url: &str) -> SocketAddr {
    use std::net::ToSocketAddrs;
    let rest = url.split_once("://").expect("a URL with ://").1;
    let hostpath = rest.rsplit_once('@').map(|(_, h)| h).unwrap_or(rest);
    let hostport = hostpath.split(['/', '?']).next().unwrap();
    hostport.to_socket_addrs().expect("a resolvable host:port").next().expect("an address")
}

/// Moves bytes one way: a reader that stamps each chunk with the time it may leave, and a
/// writer that sends the chunks in order, each no earlier than its time and never while the
/// link is stalled. End of stream travels the same way (a stalled link holds the close too).
async fn pump(mut from: tokio::net::tcp::OwnedReadHalf, mut to: tokio::net::tcp::OwnedWriteHalf,
              mode: watch::Receiver<Mode>, mut rng: Rng) {
    let (tx, mut rx) = mpsc::unbounded_channel::<Option<(Instant, Vec<u8>)>>();
    let read_mode = mode.clone();
    let reader = async move {
        let mut buf = vec![0u8; 16384];
        loop {
            let n = match from.read(&mut buf).await {
                Ok(0) | Err(_) => {
                    let _ = tx.send(None);
                    return;
                }
                Ok(n) => n,
            };
            let extra = match *read_mode.borrow() {
                Mode::Delay { one_way_ms } => Duration::from_millis(one_way_ms),
                Mode::Lossy { permille } if rng.below(1000) < permille as usize => {
                    Duration::from_millis(200 * (1 + rng.below(4) as u64))
                }
                _ => Duration::ZERO,
            };
            if tx.send(Some((Instant::now() + extra, buf[..n].to_vec()))).is_err() {
                return;
            }
        }
    };
    let mut write_mode = mode;
    let writer = async move {
        while let Some(item) = rx.recv().await {
            let Some((due, data)) = item else { break };
            sleep_until(due).await;
            loop {
                if *write_mode.borrow_and_update() != Mode::Stall {
                    break;
                }
                if write_mode.changed().await.is_err() {
                    return;
                }
            }
            if to.write_all(&data).await.is_err() {
                return;
            }
        }
        // End of stream (or the reader gave up): pass the close on, unless stalled.
        loop {
            if *write_mode.borrow_and_update() != Mode::Stall {
                break;
            }
            if write_mode.changed().await.is_err() {
                return;
            }
        }
        let _ = to.shutdown().await;
    };
    tokio::join!(reader, writer);
}
