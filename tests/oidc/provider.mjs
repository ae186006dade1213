// A real OpenID Connect provider for ragapp's sign-in tests: node's `oidc-provider` (package.json pins it;
// `make setup-dev` installs it with `npm ci`) on a loopback port, with the clients and accounts the test gives it.
//
//   node provider.mjs CONFIG.json
//
// CONFIG: {"port": 0, "clients": [oidc-provider client metadata...],
//          "accounts": {"NAME": {extra claims: "groups", "email", "realm_access", ...}},
//          "id_token_claims": false}
// Any account name signs in on the provider's own (development) login page, with any password; names not in
// "accounts" get no groups. With "id_token_claims" the claims are in the ID token too, else (the OpenID default
// for the code flow) only at the userinfo endpoint. Prints "listening ISSUER" once it accepts connections.
import { readFileSync } from "node:fs";
import http from "node:http";
import Provider from "oidc-provider";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const server = http.createServer();
await new Promise((resolve) => server.listen(config.port || 0, "127.0.0.1", resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const accounts = config.accounts || {};
const provider = new Provider(issuer, {
  clients: config.clients,
  cookies: { keys: ["ragapp tests only, never a real secret"] },
  claims: {
    openid: ["sub"],
    profile: ["preferred_username", "name"],
    email: ["email", "email_verified"],
    groups: ["groups", "realm_access"],
  },
  scopes: ["openid", "profile", "email", "groups"],
  conformIdTokenClaims: !config.id_token_claims,
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: true },
    rpInitiatedLogout: { enabled: true },
  },
  async findAccount(ctx, id) {
    return {
      accountId: id,
      async claims() {
        return { sub: id, preferred_username: id, name: id, ...(accounts[id] || {}) };
      },
    };
  },
});
// The development login page warns on the console at every start: expected here.
provider.on("server_error", (ctx, error) => console.error("server_error", error));
server.on("request", provider.callback());
console.log(`listening ${issuer}`);

const stop = () => server.close(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
