//! A small TCP proxy of the tests' own, put between one client and the server to cut its
//! connection: `cut()` closes every proxied connection and refuses new ones until `restore()`.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

pub struct Proxy {
    pub addr: SocketAddr,
    cut: Arc<AtomicBool>,
    generation: watch::Sender<u64>,
    counter: Arc<AtomicU64>,
}

impl Proxy {
    /// Listens on a free loopback port and forwards to `upstream`.
    pub async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let cut = Arc::new(AtomicBool::new(false));
        let (generation, _) = watch::channel(0u64);
        let counter = Arc::new(AtomicU64::new(0));
        let (cut2, gen2) = (cut.clone(), generation.clone());
        tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else { return };
                if cut2.load(Ordering::SeqCst) {
                    drop(client); // refused: closed at once
                    continue;
                }
                let mut cut_rx = gen2.subscribe();
                tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(upstream).await else { return };
                    let (mut cr, mut cw) = client.into_split();
                    let (mut sr, mut sw) = server.into_split();
                    let up = async {
                        let mut buf = vec![0u8; 16384];
                        loop {
                            let n = match cr.read(&mut buf).await { Ok(0) | Err(_) => return, Ok(n) => n };
                            if sw.write_all(&buf[..n]).await.is_err() { return }
                        }
                    };
                    let down = async {
                        let mut buf = vec![0u8; 16384];
                        loop {
                            let n = match sr.read(&mut buf).await { Ok(0) | Err(_) => return, Ok(n) => n };
                            if cw.write_all(&buf[..n]).await.is_err() { return }
                        }
                    };
                    tokio::select! {
                        _ = up => {}
                        _ = down => {}
                        _ = cut_rx.changed() => {}
                    }
                });
            }
        });
        Proxy { addr, cut, generation, counter }
    }

    /// Drops every open connection and refuses new ones (a black hole would need packet-level
    /// tools; a reset is the common case of a failed link or a dead server process).
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        let n = self.counter.fetch_add(1, Ordering::SeqCst) + 1;
        let _ = self.generation.send(n);
    }

    pub fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }

    /// `url` with its host:port replaced by the proxy's address.
    pub fn url_for(&self, url: &str) -> String {
        let (scheme, rest) = url.split_once("://").unwrap();
        let (creds, hostpath) = match rest.rsplit_once('@') { Some((c, h)) => (format!("{c}@"), h), None => (String::new(), rest) };
        let path = hostpath.find('/').map(|i| &hostpath[i..]).unwrap_or("");
        // prefer_socket=false: else mysql_async moves to the server's unix socket when the host
        // is on loopback, around the proxy.
        let sep = if path.contains('?') { '&' } else { '?' };
        format!("{scheme}://{creds}{}{path}{sep}prefer_socket=false", self.addr)
    }
}

/// The host:port of a `mysql://` URL.
pub fn server_addr(url: &str) -> SocketAddr {
    let rest = url.split_once("://").unwrap().1;
    let hostpath = rest.rsplit_once('@').map(|(_, h)| h).unwrap_or(rest);
    let hostport = hostpath.split('/').next().unwrap();
    use std::net::ToSocketAddrs;
    hostport.to_socket_addrs().unwrap().next().unwrap()
}
