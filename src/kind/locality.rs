//! Whether a target is on this machine: a local one is polled fast (a loopback connect costs
//! microseconds), any other gently (it is someone else's server, and DNS is the cluster's).

use super::target::{
    AmqpTarget, GrpcTarget, Host, HttpTarget, Kind, PostgresTarget, RedisTarget, Target,
};

impl Host {
    /// A loopback literal (127.0.0.0/8, `::1`, also IPv4-mapped) or `localhost` / `*.localhost`.
    pub fn is_local(&self) -> bool {
        match self {
            Host::Ip(ip) => ip.to_canonical().is_loopback(),
            Host::Name(name) => is_localhost(name),
        }
    }
}

impl Target {
    /// Local: a file, a Unix socket, anything sent through `--unix-socket` (`unix_socket`), or
    /// a host that [`Host::is_local`]. Everything else is remote.
    pub fn is_local(&self, unix_socket: bool) -> bool {
        match &self.kind {
            Kind::File(_) | Kind::Unix(_) => true,
            Kind::Http(HttpTarget { endpoint, .. }) | Kind::Grpc(GrpcTarget { endpoint, .. }) => {
                unix_socket || endpoint.host.is_local()
            }
            Kind::Tcp(endpoint)
            | Kind::Mysql(endpoint)
            | Kind::Memcached(endpoint)
            | Kind::Nats(endpoint)
            | Kind::Zookeeper(endpoint)
            | Kind::Postgres(PostgresTarget { endpoint, .. })
            | Kind::Redis(RedisTarget { endpoint, .. })
            | Kind::Amqp(AmqpTarget { endpoint, .. }) => endpoint.host.is_local(),
            // A localhost name is answered without asking any server.
            Kind::Dns(name) => is_localhost(name),
            Kind::K8s(_) => false,
        }
    }
}

/// `localhost` and names under it (RFC 6761, section 6.3).
pub fn is_localhost(name: &str) -> bool {
    let name = name.strip_suffix('.').unwrap_or(name);
    name.eq_ignore_ascii_case("localhost") || name.to_ascii_lowercase().ends_with(".localhost")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn localhost_names() {
        assert!(is_localhost("localhost"));
        assert!(is_localhost("LocalHost."));
        assert!(is_localhost("app.localhost"));
        assert!(!is_localhost("localhost.example"));
        assert!(!is_localhost("notlocalhost"));
    }

    #[test]
    fn local_and_remote_targets() {
        let local = [
            "tcp://127.0.0.1:80",
            "127.9.9.9:80",
            "[::1]:80",
            "[::ffff:127.0.0.1]:80",
            "localhost:80",
            "http://app.localhost:8080/",
            "https://LOCALHOST./healthz",
            "grpc://127.0.0.1:50051",
            "/shared/ready",
            "file:///shared/ready",
            "unix:///run/app.sock",
            "redis://localhost",
            "postgres://127.0.0.1/app",
            "dns://localhost",
        ];
        for text in local {
            assert!(Target::parse(text).unwrap().is_local(false), "{text}");
        }
        let remote = [
            "tcp://10.0.0.1:80",
            "db:5432",
            "http://web.default.svc/",
            "https://localhost.example/",
            "grpc://[fe80::1]:50051",
            "tcp://0.0.0.0:80",
            "redis://cache",
            "dns://db.default.svc",
        ];
        for text in remote {
            assert!(!Target::parse(text).unwrap().is_local(false), "{text}");
        }
        // Through --unix-socket, a URL names no host to reach.
        assert!(Target::parse("http://web.default.svc/")
            .unwrap()
            .is_local(true));
        assert!(!Target::parse("tcp://web.default.svc:80")
            .unwrap()
            .is_local(true));
    }
}
