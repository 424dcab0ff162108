// Signs in to Planwerk with the OAuth 2.0 password grant (plain fetch),
// renews the token with the refresh token, and uses openapi-fetch with the
// types openapi-typescript generates from /v1/openapi.json: creates a
// project, lists projects with a where filter, records a time entry with
// start and end times, uploads a file to a document and downloads it through
// its signed link. Prints one line per step.
//
//   PLANWERK_OPENAPI=http://127.0.0.1:8080/v1/openapi.json npm run generate
//   npm run build
//   node dist/main.js http://127.0.0.1:8080 demo admin@demo.test demo-password
import createClient, { type Middleware } from "openapi-fetch";
import type { paths, components } from "./schema.js";

type Token = components["schemas"]["TokenResponse"];

const [base = "http://127.0.0.1:8080", tenant = "demo", user = "admin@demo.test", password = "demo-password"] =
	process.argv.slice(2);

// The token endpoint takes a form; client_id and client_secret are required
// but not checked.
async function token(grant: Record<string, string>): Promise<Token> {
	const res = await fetch(`${base}/oauth2/token`, {
		method: "POST",
		headers: { companyurl: tenant, "content-type": "application/x-www-form-urlencoded" },
		body: new URLSearchParams({ client_id: "planwerk-example", client_secret: "unused", ...grant }),
	});
	if (!res.ok) throw new Error(`token: status ${res.status}: ${await res.text()}`);
	return (await res.json()) as Token;
}

// fail throws the service's problem document.
function fail(step: string, error: unknown, response: Response): never {
	throw new Error(`${step}: status ${response.status}: ${JSON.stringify(error)}`);
}

async function main(): Promise<void> {
	const first = await token({ grant_type: "password", username: user, password });
	console.log(`token: password grant, expires in ${Math.round(first.expires_in / 60)}m`);
	// Sign-ins get a refresh token (API clients' tokens do not).
	if (!first.refresh_token) throw new Error("password grant: no refresh token");
	const tok = await token({ grant_type: "refresh_token", refresh_token: first.refresh_token });
	if (tok.access_token === first.access_token) throw new Error("refresh: the token was not renewed");
	console.log("token: renewed with the refresh token");

	const client = createClient<paths>({ baseUrl: base, headers: { companyurl: tenant } });
	const auth: Middleware = {
		onRequest({ request }) {
			request.headers.set("Authorization", `Bearer ${tok.access_token}`);
			return request;
		},
	};
	client.use(auth);

	// Project.
	let project: number;
	let task: number;
	const name = `Example ${Date.now()}`;
	{
		const { data, error, response } = await client.POST("/v1/projects", { body: { name } });
		if (!data) fail("create project", error, response);
		project = data.id;
	}
	console.log(`project: created ${project} "${name}"`);
	{
		const where = JSON.stringify({ name });
		const { data, error, response } = await client.GET("/v1/projects", { params: { query: { where } } });
		if (!data) fail("list projects", error, response);
		if (data.length !== 1 || data[0].id !== project) throw new Error(`list projects: where ${where} found ${data.length}`);
		console.log(`projects: where ${where} found ${data.length}`);
	}

	// Time entry with start and end times: the account records times.
	{
		const { data, error, response } = await client.PATCH("/v1/account/settings", {
			body: { timerMode: "START_TIME_END_TIME" },
		});
		if (!data) fail("settings", error, response);
		console.log(`settings: timerMode ${data.timerMode}`);
	}
	{
		const { data, error, response } = await client.POST("/v1/tasks", { body: { name: "Planning", project } });
		if (!data) fail("create task", error, response);
		task = data.id;
		console.log(`task: created ${task}`);
	}
	{
		const startTime = "2026-01-05T09:00:00+01:00";
		const endTime = "2026-01-05T12:30:00+01:00";
		const { data, error, response } = await client.POST("/v1/time-entries", {
			body: { day: "2026-01-05", trackingType: "WORK", project, task, startTime, endTime },
		});
		if (!data) fail("create time entry", error, response);
		console.log(`time entry: created ${data.id}, sent ${startTime}–${endTime}, stored ${data.startTime}–${data.endTime}`);
	}

	// A document of the project, and a file for it.
	let document: number;
	{
		const { data, error, response } = await client.POST("/v1/documents", { body: { model: "project", record: project } });
		if (!data) fail("create document", error, response);
		document = data.id;
		console.log(`document: created ${document}`);
	}
	const content = "Übersicht: Planung 3,5 h\n";
	let upload: components["schemas"]["Upload"];
	{
		const { data, error, response } = await client.POST("/v1/files/upload/{model}/{record}", {
			params: { path: { model: "document", record: document }, query: { delete_others: "1" } },
			body: { file: "Übersicht.txt" },
			bodySerializer(body) {
				const form = new FormData();
				form.append("file", new Blob([content], { type: "text/plain; charset=utf-8" }), body.file);
				return form;
			},
		});
		if (!data) fail("upload", error, response);
		upload = data;
		console.log(`upload: ${upload.id} "${upload.filename}", ${upload.size} bytes, ${upload.contentType}`);
	}
	{
		const { data, error, response } = await client.GET("/v1/files/download/{uploadId}", {
			params: { path: { uploadId: upload.id } },
		});
		if (!data) fail("download URL", error, response);
		console.log("download: signed link received");
		// The signed link needs no token: it can be handed to a browser.
		const res = await fetch(data);
		const got = await res.text();
		if (res.status !== 200 || got !== content) {
			throw new Error(`download: status ${res.status}, ${got.length} characters, want the content uploaded`);
		}
		console.log(`download: ${new TextEncoder().encode(got).length} bytes, same as uploaded (${res.headers.get("content-disposition")})`);
	}
}

main().catch((err: unknown) => {
	console.error("error:", err instanceof Error ? err.message : err);
	process.exit(1);
});
