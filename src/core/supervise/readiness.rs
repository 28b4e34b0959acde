//! Readiness probes for `waitForPort`: one attempt each, on loopback (IPv4, then IPv6, since a
//! server may listen on either). The polling, deadline and "exited first" logic live with the
//! caller, which knows the process.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[derive(Debug, Clone)]
pub enum Probe {
    Tcp,
    Http { path: String, min: u16, max: u16 },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeResult {
    Ready,
    /// Connected, but the answer was not what was asked (HTTP status out of range); the reason
    /// is kept for the timeout error message.
    NotReady(String),
}

async fn connect(port: u16, limit: Duration) -> Result<TcpStream, String> {
    let mut last = String::from("no address tried");
    for addr in [SocketAddr::from((Ipv4Addr::LOCALHOST, port)), SocketAddr::from((Ipv6Addr::LOCALHOST, port))] {
        match tokio::time::timeout(limit, TcpStream::connect(addr)).await {
            Ok(Ok(s)) => return Ok(s),
            Ok(Err(e)) => last = format!("{addr}: {e}"),
            Err(_) => last = format!("{addr}: connect timed out"),
        }
    }
    Err(last)
}

pub async fn probe_once(port: u16, probe: &Probe, limit: Duration) -> ProbeResult {
    let mut stream = match connect(port, limit).await {
        Ok(s) => s,
        Err(e) => return ProbeResult::NotReady(e),
    };
    let Probe::Http { path, min, max } = probe else {
        return ProbeResult::Ready;
    };
    let req =
        format!("GET {path} HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\nUser-Agent: procvisor\r\n\r\n");
    let fut = async {
        stream.write_all(req.as_bytes()).await.map_err(|e| e.to_string())?;
        let mut head = Vec::with_capacity(256);
        let mut buf = [0u8; 256];
        while !head.windows(2).any(|w| w == b"\r\n") && head.len() < 8192 {
            let n = stream.read(&mut buf).await.map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        let line = String::from_utf8_lossy(&head);
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("no HTTP status line in {:?}", line.lines().next().unwrap_or("")))?;
        Ok::<u16, String>(status)
    };
    match tokio::time::timeout(limit, fut).await {
        Ok(Ok(status)) if (*min..=*max).contains(&status) => ProbeResult::Ready,
        Ok(Ok(status)) => ProbeResult::NotReady(format!("HTTP status {status} is outside {min}-{max}")),
        Ok(Err(e)) => ProbeResult::NotReady(e),
        Err(_) => ProbeResult::NotReady("HTTP request timed out".into()),
    }
}
