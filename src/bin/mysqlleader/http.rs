//! `run --http HOST:PORT`: what a load balancer and Prometheus ask a running node.
//!
//! | path | answer |
//! | --- | --- |
//! | `/leader` | 200 while this node leads (by its local deadline, at the moment of the request), else 503 |
//! | `/healthz` | 200 while the elector works (its task runs and its last call succeeded within one lease), else 503 |
//! | `/metrics` | the Prometheus text format (see `mysqlleader::metrics`) |
//!
//! GET and HEAD; HTTP/1.0 and 1.1; one request per connection (`Connection: close`). A client
//! that sends nothing useful within 2 s is dropped; nothing here ever waits on the elector or
//! the database: every answer is read from the elector's published state.

use std::net::SocketAddr;
use std::time::Duration;

use mysqlleader::{Metrics, State};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::time::Instant;

/// What the endpoints read: the elector's state, its metrics, and what "healthy" needs.
#[derive(Clone)]
pub struct View {
    pub state: watch::Receiver<State>,
    pub metrics: Metrics,
    pub service: String,
    pub lease: Duration,
}

impl View {
    fn leading(&self) -> bool {
        self.state.borrow().leads_at(Instant::now())
    }

    fn healthy(&self) -> bool {
        let s = self.state.borrow();
        s.running && s.last_ok.is_some_and(|t| t.elapsed() <= self.lease)
    }
}

/// Binds `addr`: `run` does it before it connects or campaigns, so that a taken port (or a bad
/// address) is an error at start-up that leaves no term behind. Connections that arrive before
/// [`serve`] starts wait in the listen queue.
/// Returns the listener and the address it listens on.
pub async fn bind(addr: &str) -> Result<(TcpListener, SocketAddr), String> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| format!("--http {addr}: cannot listen there ({e}); choose a free HOST:PORT"))?;
    let bound = listener.local_addr().map_err(|e| format!("--http {addr}: {e}"))?;
    Ok((listener, bound))
}

/// Serves the endpoints on `listener` in the background.
pub fn serve(listener: TcpListener, view: View) {
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let view = view.clone();
            tokio::spawn(async move {
                let _ = tokio::time::timeout(Duration::from_secs(2), answer(stream, &view)).await;
            });
        }
    });
}

async fn answer(mut stream: TcpStream, view: &View) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    // The request line and headers, up to 8 KiB; the body (there is none for GET/HEAD) is ignored.
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && !buf.windows(2).any(|w| w == b"\n\n") {
        let n = stream.read(&mut chunk).await?;
        if n == 0 || buf.len() > 8192 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let text = String::from_utf8_lossy(&buf);
    let mut parts = text.lines().next().unwrap_or("").split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let (status, content_type, body) = match (method, path) {
        ("GET" | "HEAD", "/leader") => {
            let leading = view.leading();
            (if leading { "200 OK" } else { "503 Service Unavailable" }, "text/plain; charset=utf-8",
             if leading { "leader\n".to_string() } else { "not the leader\n".to_string() })
        }
        ("GET" | "HEAD", "/healthz") => {
            let healthy = view.healthy();
            (if healthy { "200 OK" } else { "503 Service Unavailable" }, "text/plain; charset=utf-8",
             if healthy { "ok\n".to_string() } else { "unhealthy: the elector's last successful call is older than one lease\n".to_string() })
        }
        ("GET" | "HEAD", "/metrics") => ("200 OK", "text/plain; version=0.0.4; charset=utf-8", view.metrics.render(&view.service, view.leading())),
        ("GET" | "HEAD", _) => ("404 Not Found", "text/plain; charset=utf-8", "not found: /leader, /healthz, /metrics\n".to_string()),
        _ => ("405 Method Not Allowed", "text/plain; charset=utf-8", "GET or HEAD\n".to_string()),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    if method != "HEAD" {
        stream.write_all(body.as_bytes()).await?;
    }
    stream.shutdown().await
}
