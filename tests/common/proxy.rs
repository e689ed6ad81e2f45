//! The tests' TCP proxy is the fault harness's (`harness/src/proxy.rs`): put between one client
//! and the server to cut its connection. `cut()` closes every proxied connection and refuses new
//! ones until `restore()`.
#![allow(dead_code, unused_imports)]

use std::net::SocketAddr;

pub use mysqlleader_harness::proxy::server_addr;
use mysqlleader_harness::proxy::Mode;

pub struct Proxy {
    pub addr: SocketAddr,
    inner: mysqlleader_harness::proxy::Proxy,
}

impl Proxy {
    /// Listens on a free loopback port and forwards to `upstream`.
    pub async fn start(upstream: SocketAddr) -> Proxy {
        let inner = mysqlleader_harness::proxy::Proxy::start(upstream, 1).await.expect("a loopback port for the proxy");
        Proxy { addr: inner.addr, inner }
    }

    /// Drops every open connection and refuses new ones.
    pub fn cut(&self) {
        self.inner.set_mode(Mode::Cut);
    }

    /// Keeps every connection open but forwards nothing (a server that hangs), until `restore()`.
    pub fn stall(&self) {
        self.inner.set_mode(Mode::Stall);
    }

    /// Holds every chunk `one_way_ms` milliseconds in each direction (a slow link), until
    /// `restore()`.
    pub fn delay(&self, one_way_ms: u64) {
        self.inner.set_mode(Mode::Delay { one_way_ms });
    }

    pub fn restore(&self) {
        self.inner.heal();
    }

    /// How many connections the proxy accepted so far.
    pub fn connections(&self) -> u64 {
        self.inner.connections()
    }

    /// `url` with its host:port replaced by the proxy's address.
    pub fn url_for(&self, url: &str) -> String {
        self.inner.url_for(url)
    }
}
