// The ProxyTLS module: the root CA, leaf minting and TLS contexts (see CLAUDE.md, "HTTPS").
