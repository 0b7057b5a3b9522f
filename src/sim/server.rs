//! The HTTPS server: rustls over `std::net`, one thread per connection, keep-alive.
//!
//! The listener binds 127.0.0.1 only. Stopping the server wakes every thread: idle and hung
//! connections are shut down, delayed answers are cut short, and all threads are joined.

use std::collections::HashMap;
use std::io::{self, Read as _, Write as _};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context as _;
use rustls::{ServerConfig, ServerConnection, StreamOwned};

use super::http::{Request, Response, parse_head};

/// A connection with nothing to say for this long is closed.
const IDLE_TIMEOUT: Duration = Duration::from_secs(120);
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// What the network does with one request.
#[derive(Debug)]
pub(crate) enum Action {
    /// Let the application answer.
    Handle,
    /// Answer this instead.
    Answer(Response),
    /// Never answer; hold the connection until the server stops.
    Hang,
    /// Close the connection without answering.
    Drop,
    /// Let the application act, then close the connection without answering.
    DropAnswer,
}

/// The application behind the server.
pub(crate) trait App: Send + Sync + 'static {
    /// Decides, before answering, how long to delay and what to do (faults live here).
    fn plan(&self, request: &Request) -> (Duration, Action);
    /// Answers a request.
    fn handle(&self, request: &Request) -> Response;
}

/// Shared between the server handle, the accept loop and the connections.
#[derive(Default)]
struct Control {
    state: Mutex<Connections>,
    stopped: Condvar,
}

#[derive(Default)]
struct Connections {
    stopping: bool,
    next: u64,
    open: HashMap<u64, TcpStream>,
    threads: Vec<JoinHandle<()>>,
}

impl Control {
    fn lock(&self) -> MutexGuard<'_, Connections> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until the server stops, or `timeout` passes; true when stopping.
    fn wait_stopped(&self, timeout: Option<Duration>) -> bool {
        let guard = self.lock();
        match timeout {
            None => {
                let _guard = self
                    .stopped
                    .wait_while(guard, |c| !c.stopping)
                    .unwrap_or_else(PoisonError::into_inner);
                true
            }
            Some(timeout) => {
                let (guard, _) = self
                    .stopped
                    .wait_timeout_while(guard, timeout, |c| !c.stopping)
                    .unwrap_or_else(PoisonError::into_inner);
                guard.stopping
            }
        }
    }
}

/// A running server; dropping it stops it.
pub(crate) struct Server {
    addr: SocketAddr,
    control: Arc<Control>,
    accept: Option<JoinHandle<()>>,
}

impl Server {
    /// Starts accepting connections on a bound listener.
    pub(crate) fn start(
        listener: TcpListener,
        tls: Arc<ServerConfig>,
        app: Arc<dyn App>,
    ) -> anyhow::Result<Server> {
        let addr = listener.local_addr().context("listener address")?;
        let control = Arc::new(Control::default());
        let accept_control = Arc::clone(&control);
        let accept = std::thread::Builder::new()
            .name("sim-accept".into())
            .spawn(move || accept_loop(&listener, &tls, &app, &accept_control))
            .context("cannot start the accept thread")?;
        Ok(Server {
            addr,
            control,
            accept: Some(accept),
        })
    }

    /// The port actually bound.
    pub(crate) fn port(&self) -> u16 {
        self.addr.port()
    }

    fn stop(&mut self) {
        {
            let mut connections = self.control.lock();
            connections.stopping = true;
            for stream in connections.open.values() {
                let _ = stream.shutdown(Shutdown::Both);
            }
        }
        self.control.stopped.notify_all();
        // Wake the accept loop so it sees `stopping`.
        let woke = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1)).is_ok();
        if let Some(accept) = self.accept.take()
            && woke
        {
            let _ = accept.join();
        }
        let threads = std::mem::take(&mut self.control.lock().threads);
        for thread in threads {
            let _ = thread.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(
    listener: &TcpListener,
    tls: &Arc<ServerConfig>,
    app: &Arc<dyn App>,
    control: &Arc<Control>,
) {
    for incoming in listener.incoming() {
        let mut connections = control.lock();
        if connections.stopping {
            return;
        }
        let Ok(tcp) = incoming else {
            drop(connections);
            std::thread::sleep(Duration::from_millis(20));
            continue;
        };
        let Ok(registered) = tcp.try_clone() else {
            continue;
        };
        let id = connections.next;
        connections.next += 1;
        connections.open.insert(id, registered);
        connections.threads.retain(|thread| !thread.is_finished());
        let (tls, app, control_for_thread) =
            (Arc::clone(tls), Arc::clone(app), Arc::clone(control));
        let spawned = std::thread::Builder::new()
            .name("sim-conn".into())
            .spawn(move || {
                serve_connection(tcp, tls, &*app, &control_for_thread);
                control_for_thread.lock().open.remove(&id);
            });
        match spawned {
            Ok(thread) => connections.threads.push(thread),
            Err(_) => {
                connections.open.remove(&id);
            }
        }
    }
}

type Tls = StreamOwned<ServerConnection, TcpStream>;

fn serve_connection(tcp: TcpStream, tls: Arc<ServerConfig>, app: &dyn App, control: &Control) {
    let _ = tcp.set_nodelay(true);
    let _ = tcp.set_read_timeout(Some(IDLE_TIMEOUT));
    let _ = tcp.set_write_timeout(Some(WRITE_TIMEOUT));
    // Plain HTTP on the TLS port is reset, as a ZVM's web server does: closing with the
    // request unread sends a reset.
    let mut first = [0_u8; 1];
    if tcp.peek(&mut first).is_ok_and(|n| n == 1) && first[0] != 0x16 {
        return;
    }
    let Ok(conn) = ServerConnection::new(tls) else {
        return;
    };
    let mut stream = StreamOwned::new(conn, tcp);
    let mut buf = Vec::new();
    loop {
        let head = loop {
            match parse_head(&buf) {
                Ok(Some(head)) => break head,
                Ok(None) => {
                    if !fill(&mut stream, &mut buf) {
                        return;
                    }
                }
                Err(refusal) => {
                    send(&mut stream, &refusal, false);
                    return close(&mut stream);
                }
            }
        };
        if head.expect_continue
            && stream
                .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                .and_then(|()| stream.flush())
                .is_err()
        {
            return;
        }
        let total = head.len + head.content_length;
        while buf.len() < total {
            if !fill(&mut stream, &mut buf) {
                return;
            }
        }
        let mut request = head.request;
        request.body = buf[head.len..total].to_vec();
        buf.drain(..total);
        let (delay, action) = app.plan(&request);
        if !delay.is_zero() && control.wait_stopped(Some(delay)) {
            return;
        }
        let response = match action {
            Action::Handle => app.handle(&request),
            Action::Answer(response) => response,
            Action::Hang => {
                control.wait_stopped(None);
                return;
            }
            Action::Drop => {
                let _ = stream.sock.shutdown(Shutdown::Both);
                return;
            }
            Action::DropAnswer => {
                let _ = app.handle(&request);
                let _ = stream.sock.shutdown(Shutdown::Both);
                return;
            }
        };
        let keep_alive = head.keep_alive && !control.lock().stopping;
        if !send(&mut stream, &response, keep_alive) {
            return;
        }
        if !keep_alive {
            return close(&mut stream);
        }
    }
}

/// Reads more bytes; false when the connection is over (closed, failed, idle too long).
fn fill(stream: &mut Tls, buf: &mut Vec<u8>) -> bool {
    let mut chunk = [0_u8; 16 * 1024];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => return false,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                return true;
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

fn send(stream: &mut Tls, response: &Response, keep_alive: bool) -> bool {
    stream
        .write_all(&response.to_bytes(keep_alive))
        .and_then(|()| stream.flush())
        .is_ok()
}

fn close(stream: &mut Tls) {
    stream.conn.send_close_notify();
    let _ = stream.flush();
    let _ = stream.sock.shutdown(Shutdown::Both);
}
