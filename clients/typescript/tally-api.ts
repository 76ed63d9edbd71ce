export interface paths {
    "/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This document: OpenAPI 3.1 */
        get: operations["getOpenApiDocument"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The process is up */
        get: operations["checkHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/livez": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The process is up */
        get: operations["checkLiveness"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every engine this process uses is reachable, and its consumers are in their groups */
        get: operations["checkReadiness"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Prometheus metrics */
        get: operations["getMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/blobs/{key}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Fetch an object through a signed, expiring link */
        get: operations["getBlob"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/organizations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the organizations, oldest first */
        get: operations["listOrganizations"];
        put?: never;
        /** Create an organization with an admin API key, which is in this answer and never again */
        post: operations["createOrganization"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/organizations/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete an organization with all its data: keys, prompts and their bodies, webhooks and deliveries, request rows, exports and their files. Its running exports are stopped first (a 503 if they have not stopped within the export lease), and its events still on their way are dropped. On a 5xx, send it again: it resumes where it stopped. */
        delete: operations["deleteOrganization"];
        options?: never;
        head?: never;
        /** Change an organization's settings: its own retention, in days (null: the instance's). Applied to ClickHouse before the answer (rows older than the days are deleted by its merges from then on); on a 5xx nothing was changed: send it again. */
        patch: operations["changeOrganization"];
        trace?: never;
    };
    "/v1/api-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the organization's API keys (never their secrets) */
        get: operations["listApiKeys"];
        put?: never;
        /**
         * Create an API key (admin keys only). The secret is in this answer and never again.
         * @description An organization holds at most 100 keys (409 beyond).
         */
        post: operations["createApiKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/api-keys/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete an API key (admin keys only); it stops working at once. The last admin key of an organization cannot be deleted (409). */
        delete: operations["deleteApiKey"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/request/log": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Log one processed model request or a batch; 201 once they are durable
         * @description One event, an array of events, or {events: [...]}; at most 1000 events and 10485760 bytes (413 beyond).
         */
        post: operations["logRequests"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/request/query": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Query the organization's requests with a filter tree, sorted and paged
         * @description Pages by `offset` or, for deep paging, by `cursor`: every answer carries `next_cursor`, the position after its last row (docs/requests.md).
         */
        post: operations["queryRequests"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/request/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One request with its bodies */
        get: operations["getRequest"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/models": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The model price table behind cost_usd (USD per 1M tokens) */
        get: operations["listModels"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/custom/v1/log": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Helicone-compatible log intake (/custom/v1/log)
         * @description Headers: Helicone-Property-<Name>, Helicone-Session-Id/-Name/-Path, Helicone-User-Id, Helicone-Request-Id, Helicone-Prompt-Id (also with a Tally- prefix).
         */
        post: operations["logHeliconeCustom"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/oai/v1/log": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Helicone-compatible log intake (/oai/v1/log)
         * @description Headers: Helicone-Property-<Name>, Helicone-Session-Id/-Name/-Path, Helicone-User-Id, Helicone-Request-Id, Helicone-Prompt-Id (also with a Tally- prefix).
         */
        post: operations["logHeliconeOpenAi"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/anthropic/v1/log": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Helicone-compatible log intake (/anthropic/v1/log)
         * @description Headers: Helicone-Property-<Name>, Helicone-Session-Id/-Name/-Path, Helicone-User-Id, Helicone-Request-Id, Helicone-Prompt-Id (also with a Tally- prefix).
         */
        post: operations["logHeliconeAnthropic"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/googleapis/v1/log": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Helicone-compatible log intake (/googleapis/v1/log)
         * @description Headers: Helicone-Property-<Name>, Helicone-Session-Id/-Name/-Path, Helicone-User-Id, Helicone-Request-Id, Helicone-Prompt-Id (also with a Tally- prefix).
         */
        post: operations["logHeliconeGoogle"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/trace/custom/log": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Helicone-compatible log intake (/v1/trace/custom/log)
         * @description Headers: Helicone-Property-<Name>, Helicone-Session-Id/-Name/-Path, Helicone-User-Id, Helicone-Request-Id, Helicone-Prompt-Id (also with a Tally- prefix).
         */
        post: operations["logHeliconeTrace"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/traces": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * OTLP/HTTP trace export: model-call spans become requests
         * @description An ExportTraceServiceRequest as application/x-protobuf or application/json (OTLP/JSON), optionally Content-Encoding: gzip; at most 10485760 bytes before and after decompression and 10000 spans (413 beyond). The key: Authorization: Bearer <API_KEY>, or X-Tally-Api-Key: <API_KEY>. Answers an ExportTraceServiceResponse in the request encoding; partial_success counts rejected spans. Errors use the JSON envelope. Tally-Session-Id/-Name/-Path, Tally-User-Id and Tally-Property-<Name> headers give every span a session, user and properties (Helicone-* headers are read on /v1/trace/log only).
         */
        post: operations["exportTraces"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/otel/v1/traces": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * OTLP/HTTP trace export: model-call spans become requests
         * @description An ExportTraceServiceRequest as application/x-protobuf or application/json (OTLP/JSON), optionally Content-Encoding: gzip; at most 10485760 bytes before and after decompression and 10000 spans (413 beyond). The key: Authorization: Bearer <API_KEY>, or X-Tally-Api-Key: <API_KEY>. Answers an ExportTraceServiceResponse in the request encoding; partial_success counts rejected spans. Errors use the JSON envelope. Tally-Session-Id/-Name/-Path, Tally-User-Id and Tally-Property-<Name> headers give every span a session, user and properties (Helicone-* headers are read on /v1/trace/log only).
         */
        post: operations["exportTracesOtel"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/trace/log": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * OTLP/HTTP trace export: model-call spans become requests
         * @description An ExportTraceServiceRequest as application/x-protobuf or application/json (OTLP/JSON), optionally Content-Encoding: gzip; at most 10485760 bytes before and after decompression and 10000 spans (413 beyond). The key: Authorization: Bearer <API_KEY>, or X-Tally-Api-Key: <API_KEY>. Answers an ExportTraceServiceResponse in the request encoding; partial_success counts rejected spans. Errors use the JSON envelope. Helicone's path: Helicone-* and Tally-* headers (Tally's winning) give every span a session, user and properties; the session is also stored as the properties Helicone-Session-Id/-Name/-Path.
         */
        post: operations["exportTracesHelicone"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/session/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One session's requests in time order, with their tree, tokens, cost and latency */
        get: operations["getSession"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/session/query": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Search sessions: requests in the window that pass the filter, grouped by session
         * @description Pages by `offset` or, for deep paging, by `cursor`: every answer carries `next_cursor`, the position after its last session (docs/sessions.md).
         */
        post: operations["querySessions"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/session/count": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** How many sessions the same body pages through (offset, limit and sort are ignored) */
        post: operations["countSessions"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/scores": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List scores, newest first, with their status */
        get: operations["listScores"];
        put?: never;
        /**
         * Set a score of a request or a session (upsert)
         * @description Upserts by id, or by target, name and source when no id is given. Answered once durable; the score applies as soon as its request or session is stored, even if that comes later (docs/scores.md).
         */
        post: operations["createScore"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/scores/batch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Set many scores at once (upserts)
         * @description Up to 1000 scores, each as POST /v1/scores takes it: checked together, and taken together once durable (a 400 names the first bad one and takes none). For evaluators grading many requests: one call instead of one per score.
         */
        post: operations["createScores"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/scores/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Delete a stored score
         * @description A score can be deleted once GET /v1/scores shows it (404 before, and for another organization’s).
         */
        delete: operations["deleteScore"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/request/{id}/score": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Set scores of a request (Helicone's shape)
         * @description Each name in scores is a score of the request from source api (upserted). At most 50 per call.
         */
        post: operations["addRequestScores"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/request/{id}/feedback": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Rate a request (Helicone's shape): the boolean score named feedback */
        post: operations["addRequestFeedback"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/request/{id}/property": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /**
         * Add or change a custom property of a request after the fact (Helicone's shape)
         * @description The latest value of a key wins over the one the request was logged with, in filters, exports and SQL; the stored request is not rewritten.
         */
        put: operations["setRequestProperty"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/score-configs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The organization's score configs, by name */
        get: operations["listScoreConfigs"];
        put?: never;
        /**
         * Declare what values a score name takes
         * @description Scores of the name are checked against it from then on (400 otherwise). At most 200 per organization; a name has one config (409).
         */
        post: operations["createScoreConfig"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/score-configs/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete a score config; stored scores stay as they are */
        delete: operations["deleteScoreConfig"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/metrics/query": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Measures over time by up to two dimensions, top N and "other", with totals
         * @description Zero-filled buckets aligned to the caller offset; exact percentiles (quantileExact) and distinct counts (docs/metrics.md).
         */
        post: operations["queryMetrics"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sql/query": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run one SELECT over your organization's requests, sessions and scores
         * @description Reads the views of GET /v1/sql/schema (`requests`, `sessions`, `scores`), which hold your organization's rows only. Errors are 400 with ClickHouse's message; a query over a limit is 422 naming the limit (an answer over TALLY_SQL_MAX_RESULT_BYTES included: ask for a file, or export the window); ClickHouse busy or unreachable is 503. The answer is streamed as ClickHouse writes it, in the request's format. See docs/data-teams.md.
         */
        post: operations["querySql"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sql/schema": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The tables and columns POST /v1/sql/query may read, with what they mean */
        get: operations["getSqlSchema"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/prompt-2025": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create a prompt with its first version, 1.0, deployed to production */
        post: operations["createPrompt"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/prompt-2025/query": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Search prompts: partial name match ignoring case, any of the tags, newest first */
        post: operations["queryPrompts"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/prompt-2025/id/{promptId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One prompt */
        get: operations["getPrompt"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/prompt-2025/id/{promptId}/rename": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Rename a prompt (its versions are untouched) */
        post: operations["renamePrompt"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/prompt-2025/id/{promptId}/tags": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Replace a prompt's tags */
        patch: operations["setPromptTags"];
        trace?: never;
    };
    "/v1/prompt-2025/{promptId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete a prompt with all its versions and their bodies, permanently */
        delete: operations["deletePrompt"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/prompt-2025/tags": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every tag on the organization's prompts, sorted */
        get: operations["listPromptTags"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/prompt-2025/environments": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every environment some version of the organization's prompts is deployed to, sorted */
        get: operations["listPromptEnvironments"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/prompt-2025/update": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create a new version from a base version: a new major, or the next minor of its major */
        post: operations["createPromptVersion"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/prompt-2025/query/versions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** A prompt's versions, metadata only, newest first; only one major when majorVersion is given */
        post: operations["queryPromptVersions"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/prompt-2025/query/total-versions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** How many versions a prompt has, and how many distinct major versions */
        post: operations["countPromptVersions"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/prompt-2025/query/version": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** One version with s3_url, a link to its body */
        post: operations["getPromptVersion"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/prompt-2025/query/production-version": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** The production version with s3_url, a link to its body */
        post: operations["getProductionVersion"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/prompt-2025/query/environment-version": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** The version deployed to an environment with s3_url, a link to its body */
        post: operations["getEnvironmentVersion"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v2/prompt-2025/query/version": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** One version with its body inline */
        post: operations["getPromptVersionWithBody"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v2/prompt-2025/query/production-version": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** The production version with its body inline */
        post: operations["getProductionVersionWithBody"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v2/prompt-2025/query/environment-version": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** The version deployed to an environment with its body inline */
        post: operations["getEnvironmentVersionWithBody"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/prompt-2025/{promptVersionId}/prompt-body": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The body of a version: messages, model and parameters */
        get: operations["getPromptBody"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/prompt-2025/update/environment": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Deploy a version to an environment, moving the environment from the version that held it */
        post: operations["deployPromptVersion"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/prompt-2025/remove/environment": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Take a version out of an environment (production can only be moved, never removed) */
        post: operations["undeployPromptVersion"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/prompt-2025/{promptId}/{versionId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete a version and its body, permanently; refused for the production version */
        delete: operations["deletePromptVersion"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the organization's webhooks (never their keys) */
        get: operations["listWebhooks"];
        put?: never;
        /**
         * Register a webhook. hmac_key is in this answer and never again.
         * @description An organization holds at most 100 webhooks (409 beyond).
         */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete a webhook; deliveries stop at once, in-flight ones may land */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Send a test event (metadata.event "webhook.test") now and report what happened */
        post: operations["testWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The webhook's deliveries, newest first, with their last attempt
         * @description Pages by offset, or by cursor: pass the next_cursor of the previous answer.
         */
        get: operations["listWebhookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/deliveries/{deliveryId}/retry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Make a delivery due now with a fresh retry schedule (re-enables a webhook disabled by 410) */
        post: operations["retryWebhookDelivery"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/rotate-key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Issue a new hmac_key; the old one keeps signing beside it for 24 h, during which another rotation is refused (409) */
        post: operations["rotateWebhookKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/exports": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The organization's exports, newest first, with their manifests (no links)
         * @description Pages by offset, or by cursor: pass the next_cursor of the previous answer.
         */
        get: operations["listExports"];
        put?: never;
        /**
         * Export the organization's requests of a window to the object store
         * @description Answers 201 at once with the export, queued; GET /v1/exports/{id} follows it to succeeded (with its manifest and links) or failed (with the reason). See docs/exports.md.
         */
        post: operations["createExport"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/exports/schedules": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The organization's export schedules, oldest first */
        get: operations["listExportSchedules"];
        put?: never;
        /**
         * Export every hour or day of requests as it ends, without gaps
         * @description An organization holds at most 20 schedules (409 beyond, TALLY_EXPORT_MAX_SCHEDULES).
         */
        post: operations["createExportSchedule"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/exports/schedules/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Stop a schedule: no further windows; its exports so far stay */
        delete: operations["deleteExportSchedule"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/exports/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One export: its status, its manifest once succeeded, and signed links to its files */
        get: operations["getExport"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        AcceptedScore: {
            /**
             * Format: uuid
             * @description The score’s id: GET /v1/scores?id=… reads it back once stored
             */
            id: string;
            /**
             * @description Durable; it shows in queries within seconds
             * @constant
             */
            status: "accepted";
        };
        AcceptedScores: {
            /** @description The scores’ ids, in the order sent */
            ids: string[];
            /**
             * @description Durable; they show in queries within seconds
             * @constant
             */
            status: "accepted";
        };
        ApiKey: {
            /** Format: uuid */
            id: string;
            name: string;
            /** @description The first characters of the secret */
            key_prefix: string;
            /** @enum {string} */
            role: "admin" | "member";
            /** Format: date-time */
            created_at: string;
        };
        CreatedApiKey: {
            /** Format: uuid */
            id: string;
            name: string;
            /** @description The first characters of the secret */
            key_prefix: string;
            /** @enum {string} */
            role: "admin" | "member";
            /** Format: date-time */
            created_at: string;
            /** @description The secret: in this answer and never again */
            api_key: string;
        };
        CreatedOrganization: {
            /** Format: uuid */
            id: string;
            name: string;
            /** Format: date-time */
            created_at: string;
            /**
             * Format: int64
             * @description How many days ClickHouse keeps what the organization records; null: the instance's TALLY_RETENTION_DAYS (kept for good when that is unset)
             */
            retention_days: number | null;
            /** @description The organization's first admin API key: in this answer and never again */
            api_key: string;
        };
        CreatedWebhook: {
            /** Format: uuid */
            id: string;
            destination: string;
            config: {
                /** @description The events it gets, as given at creation; absent: request.completed alone (the default) */
                events?: ("request.completed" | "score.created" | "feedback.created")[];
                sampleRate: number;
                propertyFilters: components["schemas"]["PropertyFilter"][];
                /** @description The filter tree as given at creation; absent when none */
                filter?: components["schemas"]["FilterNode"];
            };
            includeData: boolean;
            /**
             * @description disabled after a receiver answered 410 Gone
             * @enum {string}
             */
            state: "active" | "disabled";
            disabled_reason: string | null;
            /** Format: date-time */
            created_at: string;
            /** @description The signing key: in this answer and never again */
            hmac_key: string;
        };
        Delivery: {
            /**
             * Format: uuid
             * @description Also the webhook-id header of every attempt
             */
            id: string;
            /**
             * Format: uuid
             * @description The request it is about; null for a score event
             */
            request_id: string | null;
            /** @description What it is about, one delivery per webhook and key: the request id, or score:<score id>:<version> for a score event */
            event_key: string;
            event: string;
            /** @enum {string} */
            status: "pending" | "delivered" | "failed";
            /** Format: int64 */
            attempts: number;
            /** Format: date-time */
            last_attempt_at: string | null;
            /** Format: int64 */
            last_response_status: number | null;
            /** @description The first 2 KB of the last response body */
            last_response_body: string | null;
            last_error: string | null;
            /** Format: int64 */
            last_duration_ms: number | null;
            /** Format: date-time */
            next_attempt_at: string | null;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            delivered_at: string | null;
        };
        /** @description Failure */
        ErrorEnvelope: {
            data: Record<string, never> | null;
            /** @description What went wrong; for 4xx it names the field and the rule */
            error: string;
        };
        Export: {
            /** Format: uuid */
            id: string;
            /**
             * @description queued (also between retries), running, succeeded or failed
             * @enum {string}
             */
            status: "queued" | "running" | "succeeded" | "failed";
            /** Format: date-time */
            from: string;
            /** Format: date-time */
            to: string;
            filter: components["schemas"]["FilterNode"];
            /**
             * @description parquet (ClickHouse Parquet), csv (CSV with a header line) or jsonl (one JSON object per line)
             * @enum {string}
             */
            format: "parquet" | "csv" | "jsonl";
            /** Format: uuid */
            schedule_id: string | null;
            /** Format: int64 */
            attempts: number;
            /** @description Why the last attempt failed; for a failed export, why it failed */
            last_error: string | null;
            /**
             * Format: date-time
             * @description When a queued export runs next
             */
            next_attempt_at: string | null;
            /** @description Why a queued export is held back until next_attempt_at: its organization's bytes per hour (TALLY_EXPORT_MAX_BYTES_PER_HOUR); null otherwise */
            waiting_reason: string | null;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            started_at: string | null;
            /** Format: date-time */
            finished_at: string | null;
            manifest: components["schemas"]["ExportManifest"] | null;
        };
        ExportManifest: {
            /** Format: uuid */
            export_id: string;
            /** Format: uuid */
            organization_id: string;
            window: {
                /** Format: date-time */
                from: string;
                /** Format: date-time */
                to: string;
            };
            filter: components["schemas"]["FilterNode"];
            /**
             * @description parquet (ClickHouse Parquet), csv (CSV with a header line) or jsonl (one JSON object per line)
             * @enum {string}
             */
            format: "parquet" | "csv" | "jsonl";
            /** @description Column names, in order: those of request_response_rmt but ingested_at (properties with their later updates applied), then scores and score_categories */
            columns: string[];
            files: {
                /** @description File name, e.g. part-00001.parquet */
                name: string;
                /**
                 * Format: int64
                 * @description Rows in the file, counted from the file itself
                 */
                rows: number;
                /** Format: int64 */
                bytes: number;
                /** @description Hex SHA-256 of the file */
                sha256: string;
            }[];
            /**
             * Format: int64
             * @description Rows in all files
             */
            total_rows: number;
            /**
             * Format: int64
             * @description The window's rows counted after the files were written: always equal to total_rows
             */
            counted_rows: number;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            finished_at: string;
        };
        ExportSchedule: {
            /** Format: uuid */
            id: string;
            /** @enum {string} */
            period: "hourly" | "daily";
            /**
             * @description parquet (ClickHouse Parquet), csv (CSV with a header line) or jsonl (one JSON object per line)
             * @enum {string}
             */
            format: "parquet" | "csv" | "jsonl";
            filter: components["schemas"]["FilterNode"];
            /**
             * Format: date-time
             * @description Start of the next window to be given an export
             */
            next_window_start: string;
            /** Format: date-time */
            created_at: string;
        };
        ExportWithLinks: {
            /** Format: uuid */
            id: string;
            /**
             * @description queued (also between retries), running, succeeded or failed
             * @enum {string}
             */
            status: "queued" | "running" | "succeeded" | "failed";
            /** Format: date-time */
            from: string;
            /** Format: date-time */
            to: string;
            filter: components["schemas"]["FilterNode"];
            /**
             * @description parquet (ClickHouse Parquet), csv (CSV with a header line) or jsonl (one JSON object per line)
             * @enum {string}
             */
            format: "parquet" | "csv" | "jsonl";
            /** Format: uuid */
            schedule_id: string | null;
            /** Format: int64 */
            attempts: number;
            /** @description Why the last attempt failed; for a failed export, why it failed */
            last_error: string | null;
            /**
             * Format: date-time
             * @description When a queued export runs next
             */
            next_attempt_at: string | null;
            /** @description Why a queued export is held back until next_attempt_at: its organization's bytes per hour (TALLY_EXPORT_MAX_BYTES_PER_HOUR); null otherwise */
            waiting_reason: string | null;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            started_at: string | null;
            /** Format: date-time */
            finished_at: string | null;
            manifest: components["schemas"]["ExportManifest"] | null;
            /** @description Signed links to the manifest and the files, made afresh on every GET; null until succeeded */
            download: {
                /** Format: date-time */
                expires_at: string;
                manifest_url: string;
                files: {
                    name: string;
                    url: string;
                }[];
            } | null;
        };
        /** @description "all" or {} (everything), a condition {table: {field: {operator: value}}}, or a branch {left, operator, right}. Operators are spelled with hyphens; not_equals and not_contains are taken as not-equals and not-contains. The properties Helicone-Session-Id/-Name/-Path read the session, however it arrived. A property reads its latest value, set after the fact (PUT /v1/request/{id}/property) or logged; scores and feedback: docs/scores.md. */
        FilterNode: "all" | Record<string, never> | {
            request_response_rmt?: {
                request_id?: {
                    equals?: string;
                    "not-equals"?: string;
                    like?: string;
                    ilike?: string;
                    contains?: string;
                    "not-contains"?: string;
                };
                created_at?: {
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    equals?: number | string;
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    gt?: number | string;
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    gte?: number | string;
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    lt?: number | string;
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    lte?: number | string;
                };
                request_created_at?: {
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    equals?: number | string;
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    gt?: number | string;
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    gte?: number | string;
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    lt?: number | string;
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    lte?: number | string;
                };
                response_created_at?: {
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    equals?: number | string;
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    gt?: number | string;
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    gte?: number | string;
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    lt?: number | string;
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    lte?: number | string;
                };
                latency?: {
                    equals?: number;
                    "not-equals"?: number;
                    gt?: number;
                    gte?: number;
                    lt?: number;
                    lte?: number;
                };
                time_to_first_token?: {
                    equals?: number;
                    "not-equals"?: number;
                    gt?: number;
                    gte?: number;
                    lt?: number;
                    lte?: number;
                };
                provider?: {
                    equals?: string;
                    "not-equals"?: string;
                    like?: string;
                    ilike?: string;
                    contains?: string;
                    "not-contains"?: string;
                };
                model?: {
                    equals?: string;
                    "not-equals"?: string;
                    like?: string;
                    ilike?: string;
                    contains?: string;
                    "not-contains"?: string;
                };
                status?: {
                    equals?: number;
                    "not-equals"?: number;
                    gt?: number;
                    gte?: number;
                    lt?: number;
                    lte?: number;
                };
                target_url?: {
                    equals?: string;
                    "not-equals"?: string;
                    like?: string;
                    ilike?: string;
                    contains?: string;
                    "not-contains"?: string;
                };
                prompt_tokens?: {
                    equals?: number;
                    "not-equals"?: number;
                    gt?: number;
                    gte?: number;
                    lt?: number;
                    lte?: number;
                };
                completion_tokens?: {
                    equals?: number;
                    "not-equals"?: number;
                    gt?: number;
                    gte?: number;
                    lt?: number;
                    lte?: number;
                };
                total_tokens?: {
                    equals?: number;
                    "not-equals"?: number;
                    gt?: number;
                    gte?: number;
                    lt?: number;
                    lte?: number;
                };
                cost?: {
                    equals?: number;
                    "not-equals"?: number;
                    gt?: number;
                    gte?: number;
                    lt?: number;
                    lte?: number;
                };
                cached?: {
                    equals?: boolean;
                };
                user_id?: {
                    equals?: string;
                    "not-equals"?: string;
                    like?: string;
                    ilike?: string;
                    contains?: string;
                    "not-contains"?: string;
                };
                session_id?: {
                    equals?: string;
                    "not-equals"?: string;
                    like?: string;
                    ilike?: string;
                    contains?: string;
                    "not-contains"?: string;
                };
                session_name?: {
                    equals?: string;
                    "not-equals"?: string;
                    like?: string;
                    ilike?: string;
                    contains?: string;
                    "not-contains"?: string;
                };
                session_path?: {
                    equals?: string;
                    "not-equals"?: string;
                    like?: string;
                    ilike?: string;
                    contains?: string;
                    "not-contains"?: string;
                };
                prompt_id?: {
                    equals?: string;
                    "not-equals"?: string;
                    like?: string;
                    ilike?: string;
                    contains?: string;
                    "not-contains"?: string;
                };
                prompt_version?: {
                    equals?: string;
                    "not-equals"?: string;
                    like?: string;
                    ilike?: string;
                    contains?: string;
                    "not-contains"?: string;
                };
                prompt_version_id?: {
                    equals?: string;
                    "not-equals"?: string;
                    like?: string;
                    ilike?: string;
                    contains?: string;
                    "not-contains"?: string;
                };
                request_body?: {
                    equals?: string;
                    "not-equals"?: string;
                    like?: string;
                    ilike?: string;
                    contains?: string;
                    "not-contains"?: string;
                };
                response_body?: {
                    equals?: string;
                    "not-equals"?: string;
                    like?: string;
                    ilike?: string;
                    contains?: string;
                    "not-contains"?: string;
                };
                trace_id?: {
                    equals?: string;
                    "not-equals"?: string;
                    like?: string;
                    ilike?: string;
                    contains?: string;
                    "not-contains"?: string;
                };
                span_id?: {
                    equals?: string;
                    "not-equals"?: string;
                    like?: string;
                    ilike?: string;
                    contains?: string;
                    "not-contains"?: string;
                };
                parent_span_id?: {
                    equals?: string;
                    "not-equals"?: string;
                    like?: string;
                    ilike?: string;
                    contains?: string;
                    "not-contains"?: string;
                };
                /** @description One property name mapped to a text condition; a missing property reads as "" */
                properties?: {
                    [key: string]: {
                        equals?: string;
                        "not-equals"?: string;
                        like?: string;
                        ilike?: string;
                        contains?: string;
                        "not-contains"?: string;
                    };
                };
                /** @description One score name mapped to a condition: the request has a live score of the name that matches */
                scores?: {
                    [key: string]: {
                        equals?: number;
                        "not-equals"?: number;
                        gt?: number;
                        gte?: number;
                        lt?: number;
                        lte?: number;
                    } | {
                        equals?: boolean;
                    } | {
                        equals?: string;
                        "not-equals"?: string;
                        like?: string;
                        ilike?: string;
                        contains?: string;
                        "not-contains"?: string;
                    };
                };
                feedback?: {
                    equals?: boolean;
                };
            };
        } | {
            /** @description One property name mapped to a text condition; a missing property reads as "" */
            properties?: {
                [key: string]: {
                    equals?: string;
                    "not-equals"?: string;
                    like?: string;
                    ilike?: string;
                    contains?: string;
                    "not-contains"?: string;
                };
            };
        } | {
            /** @description One score name mapped to a condition: the request has a live score of the name that matches */
            scores?: {
                [key: string]: {
                    equals?: number;
                    "not-equals"?: number;
                    gt?: number;
                    gte?: number;
                    lt?: number;
                    lte?: number;
                } | {
                    equals?: boolean;
                } | {
                    equals?: string;
                    "not-equals"?: string;
                    like?: string;
                    ilike?: string;
                    contains?: string;
                    "not-contains"?: string;
                };
            };
        } | {
            feedback?: {
                equals?: boolean;
            };
        } | {
            sessions_request_response_rmt?: {
                session_total_cost?: {
                    equals?: number;
                    "not-equals"?: number;
                    gt?: number;
                    gte?: number;
                    lt?: number;
                    lte?: number;
                };
                session_total_requests?: {
                    equals?: number;
                    "not-equals"?: number;
                    gt?: number;
                    gte?: number;
                    lt?: number;
                    lte?: number;
                };
                session_total_tokens?: {
                    equals?: number;
                    "not-equals"?: number;
                    gt?: number;
                    gte?: number;
                    lt?: number;
                    lte?: number;
                };
                session_avg_latency?: {
                    equals?: number;
                    "not-equals"?: number;
                    gt?: number;
                    gte?: number;
                    lt?: number;
                    lte?: number;
                };
                session_created_at?: {
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    equals?: number | string;
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    gt?: number | string;
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    gte?: number | string;
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    lt?: number | string;
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    lte?: number | string;
                };
                session_latest_request_created_at?: {
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    equals?: number | string;
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    gt?: number | string;
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    gte?: number | string;
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    lt?: number | string;
                    /** @description Unix milliseconds or ISO 8601 with an offset */
                    lte?: number | string;
                };
                /** @description One score name mapped to a condition on the session’s own score */
                scores?: {
                    [key: string]: {
                        equals?: number;
                        "not-equals"?: number;
                        gt?: number;
                        gte?: number;
                        lt?: number;
                        lte?: number;
                    } | {
                        equals?: boolean;
                    } | {
                        equals?: string;
                        "not-equals"?: string;
                        like?: string;
                        ilike?: string;
                        contains?: string;
                        "not-contains"?: string;
                    };
                };
                /** @description One score name mapped to a number condition on the avg of the scores of the session’s requests that the request-level conditions choose */
                avg_score?: {
                    [key: string]: {
                        equals?: number;
                        "not-equals"?: number;
                        gt?: number;
                        gte?: number;
                        lt?: number;
                        lte?: number;
                    };
                };
                /** @description One score name mapped to a number condition on the min of the scores of the session’s requests that the request-level conditions choose */
                min_score?: {
                    [key: string]: {
                        equals?: number;
                        "not-equals"?: number;
                        gt?: number;
                        gte?: number;
                        lt?: number;
                        lte?: number;
                    };
                };
                /** @description One score name mapped to a number condition on the max of the scores of the session’s requests that the request-level conditions choose */
                max_score?: {
                    [key: string]: {
                        equals?: number;
                        "not-equals"?: number;
                        gt?: number;
                        gte?: number;
                        lt?: number;
                        lte?: number;
                    };
                };
            };
        } | {
            left: components["schemas"]["FilterNode"];
            /** @enum {unknown} */
            operator: "and" | "or";
            right: components["schemas"]["FilterNode"];
        };
        LogEvent: {
            /**
             * Format: uuid
             * @description Generated when absent; a re-sent id (in any letter case) replaces
             */
            request_id?: string;
            /** @description When the model request was sent (1970 to 24 h from now); default: now − latency */
            created_at?: string | number;
            /** @description When the response ended (1970 to 24 h from now); default: created_at + latency */
            completed_at?: string | number;
            /** @description Default: completed_at − created_at, or 0 */
            latency_ms?: number;
            time_to_first_token_ms?: number;
            /** @description Default: from target_url, else the model (price table, then its family), else the response shape, else "custom" */
            provider?: string;
            /** @description Default: request.model, else the response model */
            model?: string;
            target_url?: string;
            /** @description The model request as sent */
            request?: unknown;
            /** @description The model response: a JSON object, or stream text */
            response?: unknown;
            /**
             * @description HTTP status of the model response
             * @default 200
             */
            status?: number;
            user_id?: string;
            properties?: {
                [key: string]: string;
            };
            session_id?: string;
            session_name?: string;
            session_path?: string;
            prompt_id?: string;
            prompt_version_id?: string;
            /** @description Default: from the response usage */
            prompt_tokens?: number;
            /** @description Default: from the response usage */
            completion_tokens?: number;
            /** @description USD, at most 1000000 (sums stay finite); default: from schemas/prices/models.json */
            cost_usd?: number;
            /** @default false */
            cached?: boolean;
            /** @description OpenTelemetry trace id of the model call */
            trace_id?: string;
            /** @description OpenTelemetry span id of the model call: the session tree's node */
            span_id?: string;
            /** @description The parent span's id: the session tree's edge */
            parent_span_id?: string;
        };
        MetricsAnswer: {
            /** @enum {string} */
            granularity: "minute" | "hour" | "day" | "week" | "month";
            /** @description Bucket starts, ISO 8601 at the caller offset */
            buckets: string[];
            series: {
                /** @description Each dimension's value; null: the "other" series (values beyond the top N) */
                dimensions: {
                    [key: string]: string | null;
                };
                /** @description Over the whole window */
                totals: {
                    [key: string]: number | null;
                };
                /** @description One value per bucket; empty buckets 0 for counts and sums, null otherwise */
                values: {
                    [key: string]: (number | null)[];
                };
            }[];
            /** @description Over every request in the window that passes the filter */
            totals: {
                [key: string]: number | null;
            };
        };
        MetricsQuery: {
            /** @description Requests with startTimeUnixMs <= created_at < endTimeUnixMs */
            timeFilter: {
                /** Format: int64 */
                startTimeUnixMs: number;
                /** Format: int64 */
                endTimeUnixMs: number;
            };
            /**
             * @description Minutes, getTimezoneOffset() convention (UTC+2 is -120): where days, weeks and months start
             * @default 0
             */
            timezoneDifference?: number;
            /** @description The filter tree of POST /v1/request/query (docs/sessions.md) */
            filter?: components["schemas"]["FilterNode"];
            /** @description The first one ranks dimension values for the top N */
            measures: ("count" | "cost_sum" | "prompt_tokens_sum" | "completion_tokens_sum" | "total_tokens_sum" | "latency_avg" | "latency_p50" | "latency_p95" | "latency_p99" | "error_rate" | "users_uniq" | "sessions_uniq")[];
            /**
             * @description Up to 2: model, provider, status, user_id, session_id, prompt_id, prompt_version, property.<key>
             * @default []
             */
            dimensions?: string[];
            /**
             * @description auto: the finest that makes at most 200 buckets; at most 2000 buckets
             * @default auto
             * @enum {string}
             */
            granularity?: "minute" | "hour" | "day" | "week" | "month" | "auto";
            /**
             * @description Top N values per dimension by the first measure; the rest are one "other" series
             * @default 10
             */
            limit?: number;
        };
        Organization: {
            /** Format: uuid */
            id: string;
            name: string;
            /** Format: date-time */
            created_at: string;
            /**
             * Format: int64
             * @description How many days ClickHouse keeps what the organization records; null: the instance's TALLY_RETENTION_DAYS (kept for good when that is unset)
             */
            retention_days: number | null;
        };
        Prompt: {
            /** Format: uuid */
            id: string;
            name: string;
            tags: string[];
            /** Format: date-time */
            created_at: string;
        };
        /** @description messages, model, temperature, max_tokens, tools and any other model parameters */
        PromptBody: {
            model: string;
            messages: ({
                role: string;
                content?: string | ({
                    type: string;
                } & {
                    [key: string]: unknown;
                })[] | null;
            } & {
                [key: string]: unknown;
            })[];
            temperature?: number;
            /** Format: int64 */
            max_tokens?: number;
            tools?: {
                [key: string]: unknown;
            }[];
        } & {
            [key: string]: unknown;
        };
        PromptVersion: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            prompt_id: string;
            model: string;
            /** Format: int64 */
            major_version: number;
            /** Format: int64 */
            minor_version: number;
            commit_message: string;
            /** @description Environments this version is deployed to; may be empty */
            environments: string[];
            /** Format: date-time */
            created_at: string;
            /** @description Where the body is kept: its key in object storage */
            storage_url: string;
        };
        PromptVersionWithBody: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            prompt_id: string;
            model: string;
            /** Format: int64 */
            major_version: number;
            /** Format: int64 */
            minor_version: number;
            commit_message: string;
            /** @description Environments this version is deployed to; may be empty */
            environments: string[];
            /** Format: date-time */
            created_at: string;
            /** @description Where the body is kept: its key in object storage */
            storage_url: string;
            /** @description A link that returns the body JSON with no Authorization header, until it expires (TALLY_SIGNED_LINK_TTL) */
            s3_url: string;
            prompt_body: components["schemas"]["PromptBody"];
        };
        PromptVersionWithLink: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            prompt_id: string;
            model: string;
            /** Format: int64 */
            major_version: number;
            /** Format: int64 */
            minor_version: number;
            commit_message: string;
            /** @description Environments this version is deployed to; may be empty */
            environments: string[];
            /** Format: date-time */
            created_at: string;
            /** @description Where the body is kept: its key in object storage */
            storage_url: string;
            /** @description A link that returns the body JSON with no Authorization header, until it expires (TALLY_SIGNED_LINK_TTL) */
            s3_url: string;
        };
        PropertyFilter: {
            key: string;
            value: string;
        };
        RequestRecord: {
            /** Format: uuid */
            request_id: string;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            completed_at: string;
            /** Format: int64 */
            latency_ms: number;
            /** Format: int64 */
            time_to_first_token_ms: number | null;
            provider: string;
            model: string;
            /** Format: int64 */
            status: number;
            target_url: string;
            /** Format: int64 */
            prompt_tokens: number;
            /** Format: int64 */
            completion_tokens: number;
            /** Format: int64 */
            total_tokens: number;
            cost_usd: number;
            cached: boolean;
            user_id: string;
            session_id: string;
            session_name: string;
            session_path: string;
            properties: {
                [key: string]: string;
            };
            prompt_id: string;
            prompt_version_id: string;
            /** @description The model request (JSON when it was JSON); with includeBody */
            request_body?: unknown;
            /** @description The model response (JSON, or its text); with includeBody */
            response_body?: unknown;
            trace_id: string;
            span_id: string;
            parent_span_id: string;
        };
        Score: {
            /** Format: uuid */
            id: string;
            target: {
                /** Format: uuid */
                request_id: string;
            } | {
                session_id: string;
            };
            name: string;
            value: number | boolean | string;
            /** @enum {string} */
            data_type: "numeric" | "boolean" | "categorical";
            source: string;
            comment: string;
            /** Format: date-time */
            created_at: string;
            /**
             * @description applied: its request or session is stored; pending: not (yet), within the grace period; orphaned: still not after it
             * @enum {string}
             */
            status: "applied" | "pending" | "orphaned";
        };
        ScoreConfig: {
            /** Format: uuid */
            id: string;
            name: string;
            /** @enum {string} */
            data_type: "numeric" | "boolean" | "categorical";
            min: number | null;
            max: number | null;
            categories: string[] | null;
            description: string;
            /** Format: date-time */
            created_at: string;
        };
        ScoreWebhookPayload: {
            /**
             * @description Changes only when the shape does
             * @constant
             */
            version: "2026-11-01";
            metadata: {
                /**
                 * @description feedback.created for the score named feedback, score.created for any other
                 * @enum {string}
                 */
                event: "score.created" | "feedback.created";
                /** Format: uuid */
                organizationId: string;
                /**
                 * Format: uuid
                 * @description The scored request; null for a score of a session
                 */
                requestId: string | null;
                /** @description The session: the scored session, or the scored request's session; null when the request has none or was not stored yet */
                sessionId: string | null;
                /**
                 * Format: date-time
                 * @description When the score was given
                 */
                timestamp: string;
            };
            score: {
                /**
                 * Format: uuid
                 * @description The same on every later version of the score: an update is delivered again under it
                 */
                id: string;
                name: string;
                value: number | boolean | string;
                /** @enum {string} */
                data_type: "numeric" | "boolean" | "categorical" | "text";
                /** @description api, annotation or eval */
                source: string;
                comment: string;
                /**
                 * Format: int64
                 * @description Orders the versions of one score: a delivery with a lower version than one received is older
                 */
                version: number;
            };
        };
        Session: {
            session_id: string;
            session_name: string;
            /** @description First request in the window, ISO 8601 at the caller offset */
            created_at: string;
            /** @description Last request in the window, ISO 8601 at the caller offset */
            latest_request_created_at: string;
            /** @description USD */
            total_cost: number;
            /** Format: int64 */
            total_requests: number;
            /** Format: int64 */
            prompt_tokens: number;
            /** Format: int64 */
            completion_tokens: number;
            /**
             * Format: int64
             * @description prompt_tokens plus completion_tokens
             */
            total_tokens: number;
            /** @description Milliseconds */
            avg_latency: number;
            /** @description Unique, non-empty */
            user_ids: string[];
        };
        SessionDetail: {
            session_id: string;
            /** @description The latest request's session name */
            session_name: string;
            /**
             * Format: int64
             * @description Every request of the session, listed or not
             */
            total_requests: number;
            /** @description USD, over every request of the session */
            total_cost: number;
            /**
             * Format: int64
             * @description prompt_tokens plus completion_tokens over every request, as POST /v1/session/query counts them
             */
            total_tokens: number;
            /** @description More than 1000 requests: only the first ones are listed */
            truncated: boolean;
            /** @description In time order; each after its parent */
            requests: components["schemas"]["SessionRequest"][];
        };
        SessionRequest: {
            /** Format: uuid */
            request_id: string;
            /**
             * Format: uuid
             * @description The request of the parent span (same trace), else of the nearest session_path prefix; null for a root
             */
            parent_request_id: string | null;
            /**
             * Format: int64
             * @description 0 for a root
             */
            depth: number;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            completed_at: string;
            /** Format: int64 */
            latency_ms: number;
            provider: string;
            model: string;
            /** Format: int64 */
            status: number;
            /** Format: int64 */
            prompt_tokens: number;
            /** Format: int64 */
            completion_tokens: number;
            /** Format: int64 */
            total_tokens: number;
            cost_usd: number;
            user_id: string;
            session_path: string;
            trace_id: string;
            span_id: string;
            parent_span_id: string;
        };
        SqlQuery: {
            sql: string;
            /** @description Values of the query's {name:Type} placeholders (ClickHouse query parameters) */
            params?: {
                [key: string]: string | number | boolean | null;
            };
            /**
             * @description json: rows in the envelope; jsonl (a JSON object per line), csv and tsv (with a header row), parquet: a file. Every format is streamed as ClickHouse writes it
             * @default json
             * @enum {string}
             */
            format?: "json" | "jsonl" | "csv" | "tsv" | "parquet";
        };
        SqlResult: {
            columns: {
                name: string;
                /** @description ClickHouse type */
                type: string;
            }[];
            /** @description One object per row, keyed by column. 64-bit integers are strings (no precision lost), times ISO 8601 UTC */
            rows: {
                [key: string]: unknown;
            }[];
            /** Format: int64 */
            row_count: number;
            /** @description How long the server took. No rows or bytes read: those count granules shared with other organizations' rows */
            statistics: {
                elapsed_ms: number;
            };
        };
        SqlSchema: {
            tables: {
                name: string;
                description: string;
                columns: {
                    name: string;
                    /** @description ClickHouse type */
                    type: string;
                    description: string;
                }[];
            }[];
        };
        Webhook: {
            /** Format: uuid */
            id: string;
            destination: string;
            config: {
                /** @description The events it gets, as given at creation; absent: request.completed alone (the default) */
                events?: ("request.completed" | "score.created" | "feedback.created")[];
                sampleRate: number;
                propertyFilters: components["schemas"]["PropertyFilter"][];
                /** @description The filter tree as given at creation; absent when none */
                filter?: components["schemas"]["FilterNode"];
            };
            includeData: boolean;
            /**
             * @description disabled after a receiver answered 410 Gone
             * @enum {string}
             */
            state: "active" | "disabled";
            disabled_reason: string | null;
            /** Format: date-time */
            created_at: string;
        };
        WebhookPayload: {
            /**
             * @description Changes only when the shape does
             * @constant
             */
            version: "2026-11-01";
            metadata: {
                /** Format: uuid */
                requestId: string;
                /** Format: uuid */
                organizationId: string;
                /**
                 * Format: date-time
                 * @description When the request completed
                 */
                timestamp: string;
                /**
                 * @description webhook.test comes from POST /v1/webhooks/{id}/test only
                 * @enum {string}
                 */
                event: "request.completed" | "webhook.test";
            };
            /** @description The model request as recorded: parsed JSON, a string when it was not JSON, null when empty; absent when the webhook's includeData is false */
            request?: unknown;
            /** @description The model response as recorded: parsed JSON, a string when it was not JSON, null when empty; absent when the webhook's includeData is false */
            response?: unknown;
            metrics: {
                /** Format: int64 */
                latency_ms: number;
                /** @description USD */
                cost_usd: number;
                cached: boolean;
                /** Format: int64 */
                prompt_tokens: number;
                /** Format: int64 */
                completion_tokens: number;
                /** Format: int64 */
                total_tokens: number;
            };
            properties: {
                [key: string]: string;
            };
        };
        WebhookTestResult: {
            /** Format: uuid */
            delivery_id: string;
            delivered: boolean;
            /**
             * Format: int64
             * @description The receiver's HTTP status
             */
            status: number | null;
            /** Format: int64 */
            duration_ms: number;
            error: string | null;
        };
        /** @description Several events, each a LogEvent */
        LogEventList: components["schemas"]["LogEvent"][];
        /** @description Several events under `events` */
        LogEventBatch: {
            events: components["schemas"]["LogEvent"][];
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getOpenApiDocument: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "openapi": "3.1.0",
                     *       "info": {
                     *         "title": "Tally API",
                     *         "version": "1.0.0"
                     *       },
                     *       "servers": [
                     *         {
                     *           "url": "http://127.0.0.1:8787"
                     *         }
                     *       ],
                     *       "paths": {
                     *         "/v1/request/log": {
                     *           "post": {
                     *             "operationId": "logRequests"
                     *           }
                     *         }
                     *       }
                     *     }
                     */
                    "application/json": {
                        openapi: string;
                        info: {
                            [key: string]: unknown;
                        };
                        paths: {
                            [key: string]: unknown;
                        };
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    checkHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "ok": true
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** @description Always true. */
                            ok: boolean;
                        };
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    checkLiveness: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "ok": true
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** @description Always true. */
                            ok: boolean;
                        };
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    checkReadiness: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "ready": true,
                     *         "engines": {
                     *           "postgres": "ok",
                     *           "clickhouse": "ok",
                     *           "blobs (filesystem)": "ok"
                     *         }
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            ready: boolean;
                            engines: {
                                [key: string]: string;
                            };
                        };
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not available now: retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            ready: boolean;
                            engines: {
                                [key: string]: string;
                            };
                        };
                        error: string;
                    } | components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The Prometheus text exposition format */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example # HELP tally_events_accepted_total Request events the API acknowledged as durable (201)
                     *     # TYPE tally_events_accepted_total counter
                     *     tally_events_accepted_total 1842
                     */
                    "text/plain; version=0.0.4; charset=utf-8": string;
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getBlob: {
        parameters: {
            query: {
                /** @example 1795688717 */
                expires: string;
                /** @example 6f1c0e6d9b1a4c5e8f7a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70 */
                signature: string;
            };
            header?: never;
            path: {
                /**
                 * @description The object's key, slashes included
                 * @example prompts/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/f6fbdaef-c1ab-51c9-b218-52ad5caaa49e/71dd6e63-a6e5-5f3c-bec3-4a4a301a633b.json
                 */
                key: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The object: a prompt body or an export manifest (JSON), or an export file */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "model": "gpt-4o-mini",
                     *       "messages": [
                     *         {
                     *           "role": "user",
                     *           "content": "{{ticket}}"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": unknown;
                    "application/vnd.apache.parquet": string;
                    "text/csv": string;
                    "application/x-ndjson": string;
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not allowed with this key (or this link) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listOrganizations: {
        parameters: {
            query?: {
                /** @description Records skipped */
                offset?: number;
                /**
                 * @description Records per page
                 * @example 50
                 */
                limit?: number;
                /** @description Alias: the page, 0-indexed (offset = page × pageSize); offset must then be 0 or left out */
                page?: number;
                /** @description Alias of limit, used with page */
                pageSize?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "942665c1-1730-5568-b7cf-fc002a962dcc",
                     *           "name": "Acme Research",
                     *           "created_at": "2026-11-26T10:15:00.522Z",
                     *           "retention_days": 90
                     *         }
                     *       ],
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["Organization"][];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createOrganization: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Acme Research"
                 *     }
                 */
                "application/json": {
                    name: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "50fb8ae3-cc90-50f8-ab99-71652f7ec0c4",
                     *         "name": "Acme Research",
                     *         "created_at": "2026-11-26T10:15:14.270Z",
                     *         "retention_days": null,
                     *         "api_key": "tly_3q9Zx1cVb7NmK2pL8wR4tY6uI0oPaSdFgHjKlZxCvBn"
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["CreatedOrganization"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    deleteOrganization: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 50fb8ae3-cc90-50f8-ab99-71652f7ec0c4 */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": null,
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: Record<string, never> | null;
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    changeOrganization: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 50fb8ae3-cc90-50f8-ab99-71652f7ec0c4 */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "retention_days": 90
                 *     }
                 */
                "application/json": {
                    /** @description Days ClickHouse keeps the organization's requests (from their created_at), their hourly session and metrics rows, and its scores and property updates (from when they were set); null: the instance's TALLY_RETENTION_DAYS */
                    retention_days: number | null;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "50fb8ae3-cc90-50f8-ab99-71652f7ec0c4",
                     *         "name": "Acme Research",
                     *         "created_at": "2026-11-26T10:15:14.270Z",
                     *         "retention_days": 90
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["Organization"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listApiKeys: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "eb5afb72-5cf2-5143-bd0f-b4773729df14",
                     *           "name": "admin",
                     *           "key_prefix": "tly_3q9Zx1cV",
                     *           "role": "admin",
                     *           "created_at": "2026-11-26T10:15:14.270Z"
                     *         },
                     *         {
                     *           "id": "12d68392-e074-56bf-84a1-23b2c41ab304",
                     *           "name": "ci-pipeline",
                     *           "key_prefix": "tly_3q9Zx1cV",
                     *           "role": "member",
                     *           "created_at": "2026-11-26T10:15:14.292Z"
                     *         }
                     *       ],
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["ApiKey"][];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "ci-pipeline",
                 *       "role": "member"
                 *     }
                 */
                "application/json": {
                    name: string;
                    /**
                     * @description admin keys can manage keys; default member
                     * @default member
                     * @enum {string}
                     */
                    role?: "admin" | "member";
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "12d68392-e074-56bf-84a1-23b2c41ab304",
                     *         "name": "ci-pipeline",
                     *         "key_prefix": "tly_3q9Zx1cV",
                     *         "role": "member",
                     *         "created_at": "2026-11-26T10:15:14.292Z",
                     *         "api_key": "tly_3q9Zx1cVb7NmK2pL8wR4tY6uI0oPaSdFgHjKlZxCvBn"
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["CreatedApiKey"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not allowed with this key (or this link) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Conflicts with the current state: `error` says how */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    deleteApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 12d68392-e074-56bf-84a1-23b2c41ab304 */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": null,
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: Record<string, never> | null;
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not allowed with this key (or this link) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Conflicts with the current state: `error` says how */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    logRequests: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "model": "gpt-4o-mini",
                 *       "provider": "openai",
                 *       "target_url": "https://api.openai.com/v1/chat/completions",
                 *       "created_at": "2026-11-20T09:30:00.000Z",
                 *       "completed_at": "2026-11-20T09:30:01.240Z",
                 *       "time_to_first_token_ms": 310,
                 *       "status": 200,
                 *       "user_id": "user-1842",
                 *       "properties": {
                 *         "team": "support",
                 *         "environment": "production"
                 *       },
                 *       "session_id": "ticket-5521",
                 *       "session_name": "Support triage",
                 *       "session_path": "/triage/summary",
                 *       "prompt_tokens": 42,
                 *       "completion_tokens": 9,
                 *       "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
                 *       "span_id": "00f067aa0ba902b7",
                 *       "request": {
                 *         "model": "gpt-4o-mini",
                 *         "messages": [
                 *           {
                 *             "role": "user",
                 *             "content": "Summarise this ticket in one line."
                 *           }
                 *         ]
                 *       },
                 *       "response": {
                 *         "choices": [
                 *           {
                 *             "message": {
                 *               "role": "assistant",
                 *               "content": "Customer cannot reset their password."
                 *             }
                 *           }
                 *         ],
                 *         "usage": {
                 *           "prompt_tokens": 42,
                 *           "completion_tokens": 9,
                 *           "total_tokens": 51
                 *         }
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["LogEvent"] | components["schemas"]["LogEventList"] | components["schemas"]["LogEventBatch"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "request_ids": [
                     *           "b0e59b83-0614-5173-b173-f5b89613d1d6"
                     *         ]
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            request_ids: string[];
                        };
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    queryRequests: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "filter": {
                 *         "request_response_rmt": {
                 *           "model": {
                 *             "equals": "gpt-4o-mini"
                 *           }
                 *         }
                 *       },
                 *       "limit": 10,
                 *       "sort": {
                 *         "created_at": "desc"
                 *       }
                 *     }
                 */
                "application/json": {
                    filter?: components["schemas"]["FilterNode"];
                    /**
                     * @description Records skipped
                     * @default 0
                     */
                    offset?: number;
                    /**
                     * @description Records per page
                     * @default 10
                     */
                    limit?: number;
                    /**
                     * Format: int64
                     * @description Alias: the page, 0-indexed (offset = page × pageSize); offset must then be 0 or left out
                     */
                    page?: number;
                    /** @description Alias of limit, used with page */
                    pageSize?: number;
                    /**
                     * @description One field mapped to asc or desc; default {created_at: "desc"}
                     * @default {
                     *       "created_at": "desc"
                     *     }
                     */
                    sort?: {
                        [key: string]: "asc" | "desc";
                    };
                    /**
                     * @description Include request_body and response_body
                     * @default false
                     */
                    includeBody?: boolean;
                    /** @description The next_cursor of the previous page: the page after it, by the same sort */
                    cursor?: string;
                    /** @description Only these fields of each request (bodies only if named here); default: all but the bodies */
                    fields?: ("request_id" | "created_at" | "completed_at" | "latency_ms" | "time_to_first_token_ms" | "provider" | "model" | "status" | "target_url" | "prompt_tokens" | "completion_tokens" | "total_tokens" | "cost_usd" | "cached" | "user_id" | "session_id" | "session_name" | "session_path" | "properties" | "prompt_id" | "prompt_version_id" | "request_body" | "response_body" | "trace_id" | "span_id" | "parent_span_id")[];
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "request_id": "b0e59b83-0614-5173-b173-f5b89613d1d6",
                     *           "created_at": "2026-11-20T09:30:00.000Z",
                     *           "completed_at": "2026-11-20T09:30:01.240Z",
                     *           "latency_ms": 1240,
                     *           "time_to_first_token_ms": 310,
                     *           "provider": "openai",
                     *           "model": "gpt-4o-mini",
                     *           "status": 200,
                     *           "target_url": "https://api.openai.com/v1/chat/completions",
                     *           "prompt_tokens": 42,
                     *           "completion_tokens": 9,
                     *           "total_tokens": 51,
                     *           "cost_usd": 0.0000117,
                     *           "cached": false,
                     *           "user_id": "user-1842",
                     *           "session_id": "ticket-5521",
                     *           "session_name": "Support triage",
                     *           "session_path": "/triage/summary",
                     *           "properties": {
                     *             "team": "support",
                     *             "environment": "production"
                     *           },
                     *           "prompt_id": "",
                     *           "prompt_version_id": "",
                     *           "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
                     *           "span_id": "00f067aa0ba902b7",
                     *           "parent_span_id": ""
                     *         }
                     *       ],
                     *       "error": null,
                     *       "next_cursor": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** Format: uuid */
                            request_id?: string;
                            /** Format: date-time */
                            created_at?: string;
                            /** Format: date-time */
                            completed_at?: string;
                            /** Format: int64 */
                            latency_ms?: number;
                            /** Format: int64 */
                            time_to_first_token_ms?: number | null;
                            provider?: string;
                            model?: string;
                            /** Format: int64 */
                            status?: number;
                            target_url?: string;
                            /** Format: int64 */
                            prompt_tokens?: number;
                            /** Format: int64 */
                            completion_tokens?: number;
                            /** Format: int64 */
                            total_tokens?: number;
                            cost_usd?: number;
                            cached?: boolean;
                            user_id?: string;
                            session_id?: string;
                            session_name?: string;
                            session_path?: string;
                            properties?: {
                                [key: string]: string;
                            };
                            prompt_id?: string;
                            prompt_version_id?: string;
                            /** @description The model request (JSON when it was JSON); with includeBody */
                            request_body?: unknown;
                            /** @description The model response (JSON, or its text); with includeBody */
                            response_body?: unknown;
                            trace_id?: string;
                            span_id?: string;
                            parent_span_id?: string;
                        }[];
                        error: string | null;
                        /** @description Pass as cursor (with the same sort) for the next page; null when this page has fewer rows than limit (a full last page is followed by an empty one) */
                        next_cursor: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The query exceeded a query limit: `error` names it and its value */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getRequest: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example b0e59b83-0614-5173-b173-f5b89613d1d6 */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "request_id": "b0e59b83-0614-5173-b173-f5b89613d1d6",
                     *         "created_at": "2026-11-20T09:30:00.000Z",
                     *         "completed_at": "2026-11-20T09:30:01.240Z",
                     *         "latency_ms": 1240,
                     *         "time_to_first_token_ms": 310,
                     *         "provider": "openai",
                     *         "model": "gpt-4o-mini",
                     *         "status": 200,
                     *         "target_url": "https://api.openai.com/v1/chat/completions",
                     *         "prompt_tokens": 42,
                     *         "completion_tokens": 9,
                     *         "total_tokens": 51,
                     *         "cost_usd": 0.0000117,
                     *         "cached": false,
                     *         "user_id": "user-1842",
                     *         "session_id": "ticket-5521",
                     *         "session_name": "Support triage",
                     *         "session_path": "/triage/summary",
                     *         "properties": {
                     *           "team": "support",
                     *           "environment": "production"
                     *         },
                     *         "prompt_id": "",
                     *         "prompt_version_id": "",
                     *         "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
                     *         "span_id": "00f067aa0ba902b7",
                     *         "parent_span_id": "",
                     *         "request_body": {
                     *           "model": "gpt-4o-mini",
                     *           "messages": [
                     *             {
                     *               "role": "user",
                     *               "content": "Summarise this ticket in one line."
                     *             }
                     *           ]
                     *         },
                     *         "response_body": {
                     *           "choices": [
                     *             {
                     *               "message": {
                     *                 "role": "assistant",
                     *                 "content": "Customer cannot reset their password."
                     *               }
                     *             }
                     *           ],
                     *           "usage": {
                     *             "prompt_tokens": 42,
                     *             "completion_tokens": 9,
                     *             "total_tokens": 51
                     *           }
                     *         }
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["RequestRecord"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The query exceeded a query limit: `error` names it and its value */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listModels: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "currency": "USD",
                     *         "unit": "per 1M tokens",
                     *         "as_of": "2025-08-31",
                     *         "sources": {
                     *           "openai": "https://openai.com/api/pricing/ (standard tier, text tokens)",
                     *           "anthropic": "https://www.anthropic.com/pricing#api (base input and output; cache writes and reads not priced separately here)",
                     *           "google": "https://ai.google.dev/gemini-api/docs/pricing (paid tier, prompts up to the first price break)"
                     *         },
                     *         "models": [
                     *           {
                     *             "provider": "openai",
                     *             "model": "gpt-4o-mini",
                     *             "input": 0.15,
                     *             "output": 0.6
                     *           },
                     *           {
                     *             "provider": "anthropic",
                     *             "model": "claude-sonnet-4",
                     *             "input": 3,
                     *             "output": 15
                     *           },
                     *           {
                     *             "provider": "google",
                     *             "model": "gemini-2.5-flash",
                     *             "input": 0.3,
                     *             "output": 2.5
                     *           }
                     *         ]
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            currency: string;
                            unit: string;
                            as_of: string;
                            sources: {
                                [key: string]: string;
                            };
                            models: {
                                provider: string;
                                model: string;
                                /** @description USD per 1M input (prompt) tokens */
                                input: number;
                                /** @description USD per 1M output (completion) tokens */
                                output: number;
                            }[];
                        };
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    logHeliconeCustom: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "providerRequest": {
                 *         "url": "https://api.openai.com/v1/chat/completions",
                 *         "json": {
                 *           "model": "gpt-4o-mini",
                 *           "messages": [
                 *             {
                 *               "role": "user",
                 *               "content": "Hello"
                 *             }
                 *           ]
                 *         },
                 *         "meta": {
                 *           "Helicone-User-Id": "user-1842"
                 *         }
                 *       },
                 *       "providerResponse": {
                 *         "json": {
                 *           "choices": [
                 *             {
                 *               "message": {
                 *                 "role": "assistant",
                 *                 "content": "Hi! How can I help?"
                 *               }
                 *             }
                 *           ],
                 *           "usage": {
                 *             "prompt_tokens": 8,
                 *             "completion_tokens": 6
                 *           }
                 *         },
                 *         "status": 200,
                 *         "headers": {}
                 *       },
                 *       "timing": {
                 *         "startTime": {
                 *           "seconds": 1795685400,
                 *           "milliseconds": 0
                 *         },
                 *         "endTime": {
                 *           "seconds": 1795685400,
                 *           "milliseconds": 850
                 *         }
                 *       },
                 *       "provider": "openai"
                 *     }
                 */
                "application/json": {
                    providerRequest: {
                        /** @default  */
                        url?: string;
                        json?: unknown;
                        meta?: {
                            [key: string]: unknown;
                        };
                    };
                    providerResponse: {
                        json?: unknown;
                        textBody?: string;
                        /** @default 200 */
                        status?: number;
                        headers?: {
                            [key: string]: unknown;
                        };
                    };
                    timing: {
                        startTime: {
                            /** Format: int64 */
                            seconds: number;
                            milliseconds: number;
                        } | string | number;
                        endTime: {
                            /** Format: int64 */
                            seconds: number;
                            milliseconds: number;
                        } | string | number;
                        timeToFirstToken?: number;
                    };
                    provider?: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "request_id": "89bb34cb-e396-55f3-8030-46c7c6bbfd15"
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** Format: uuid */
                            request_id: string;
                        };
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    logHeliconeOpenAi: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "providerRequest": {
                 *         "url": "https://api.openai.com/v1/chat/completions",
                 *         "json": {
                 *           "model": "gpt-4o-mini",
                 *           "messages": [
                 *             {
                 *               "role": "user",
                 *               "content": "Hello"
                 *             }
                 *           ]
                 *         },
                 *         "meta": {
                 *           "Helicone-User-Id": "user-1842"
                 *         }
                 *       },
                 *       "providerResponse": {
                 *         "json": {
                 *           "choices": [
                 *             {
                 *               "message": {
                 *                 "role": "assistant",
                 *                 "content": "Hi! How can I help?"
                 *               }
                 *             }
                 *           ],
                 *           "usage": {
                 *             "prompt_tokens": 8,
                 *             "completion_tokens": 6
                 *           }
                 *         },
                 *         "status": 200,
                 *         "headers": {}
                 *       },
                 *       "timing": {
                 *         "startTime": {
                 *           "seconds": 1795685400,
                 *           "milliseconds": 0
                 *         },
                 *         "endTime": {
                 *           "seconds": 1795685400,
                 *           "milliseconds": 850
                 *         }
                 *       },
                 *       "provider": "openai"
                 *     }
                 */
                "application/json": {
                    providerRequest: {
                        /** @default  */
                        url?: string;
                        json?: unknown;
                        meta?: {
                            [key: string]: unknown;
                        };
                    };
                    providerResponse: {
                        json?: unknown;
                        textBody?: string;
                        /** @default 200 */
                        status?: number;
                        headers?: {
                            [key: string]: unknown;
                        };
                    };
                    timing: {
                        startTime: {
                            /** Format: int64 */
                            seconds: number;
                            milliseconds: number;
                        } | string | number;
                        endTime: {
                            /** Format: int64 */
                            seconds: number;
                            milliseconds: number;
                        } | string | number;
                        timeToFirstToken?: number;
                    };
                    provider?: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "request_id": "89bb34cb-e396-55f3-8030-46c7c6bbfd15"
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** Format: uuid */
                            request_id: string;
                        };
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    logHeliconeAnthropic: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "providerRequest": {
                 *         "url": "https://api.openai.com/v1/chat/completions",
                 *         "json": {
                 *           "model": "gpt-4o-mini",
                 *           "messages": [
                 *             {
                 *               "role": "user",
                 *               "content": "Hello"
                 *             }
                 *           ]
                 *         },
                 *         "meta": {
                 *           "Helicone-User-Id": "user-1842"
                 *         }
                 *       },
                 *       "providerResponse": {
                 *         "json": {
                 *           "choices": [
                 *             {
                 *               "message": {
                 *                 "role": "assistant",
                 *                 "content": "Hi! How can I help?"
                 *               }
                 *             }
                 *           ],
                 *           "usage": {
                 *             "prompt_tokens": 8,
                 *             "completion_tokens": 6
                 *           }
                 *         },
                 *         "status": 200,
                 *         "headers": {}
                 *       },
                 *       "timing": {
                 *         "startTime": {
                 *           "seconds": 1795685400,
                 *           "milliseconds": 0
                 *         },
                 *         "endTime": {
                 *           "seconds": 1795685400,
                 *           "milliseconds": 850
                 *         }
                 *       },
                 *       "provider": "openai"
                 *     }
                 */
                "application/json": {
                    providerRequest: {
                        /** @default  */
                        url?: string;
                        json?: unknown;
                        meta?: {
                            [key: string]: unknown;
                        };
                    };
                    providerResponse: {
                        json?: unknown;
                        textBody?: string;
                        /** @default 200 */
                        status?: number;
                        headers?: {
                            [key: string]: unknown;
                        };
                    };
                    timing: {
                        startTime: {
                            /** Format: int64 */
                            seconds: number;
                            milliseconds: number;
                        } | string | number;
                        endTime: {
                            /** Format: int64 */
                            seconds: number;
                            milliseconds: number;
                        } | string | number;
                        timeToFirstToken?: number;
                    };
                    provider?: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "request_id": "89bb34cb-e396-55f3-8030-46c7c6bbfd15"
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** Format: uuid */
                            request_id: string;
                        };
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    logHeliconeGoogle: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "providerRequest": {
                 *         "url": "https://api.openai.com/v1/chat/completions",
                 *         "json": {
                 *           "model": "gpt-4o-mini",
                 *           "messages": [
                 *             {
                 *               "role": "user",
                 *               "content": "Hello"
                 *             }
                 *           ]
                 *         },
                 *         "meta": {
                 *           "Helicone-User-Id": "user-1842"
                 *         }
                 *       },
                 *       "providerResponse": {
                 *         "json": {
                 *           "choices": [
                 *             {
                 *               "message": {
                 *                 "role": "assistant",
                 *                 "content": "Hi! How can I help?"
                 *               }
                 *             }
                 *           ],
                 *           "usage": {
                 *             "prompt_tokens": 8,
                 *             "completion_tokens": 6
                 *           }
                 *         },
                 *         "status": 200,
                 *         "headers": {}
                 *       },
                 *       "timing": {
                 *         "startTime": {
                 *           "seconds": 1795685400,
                 *           "milliseconds": 0
                 *         },
                 *         "endTime": {
                 *           "seconds": 1795685400,
                 *           "milliseconds": 850
                 *         }
                 *       },
                 *       "provider": "openai"
                 *     }
                 */
                "application/json": {
                    providerRequest: {
                        /** @default  */
                        url?: string;
                        json?: unknown;
                        meta?: {
                            [key: string]: unknown;
                        };
                    };
                    providerResponse: {
                        json?: unknown;
                        textBody?: string;
                        /** @default 200 */
                        status?: number;
                        headers?: {
                            [key: string]: unknown;
                        };
                    };
                    timing: {
                        startTime: {
                            /** Format: int64 */
                            seconds: number;
                            milliseconds: number;
                        } | string | number;
                        endTime: {
                            /** Format: int64 */
                            seconds: number;
                            milliseconds: number;
                        } | string | number;
                        timeToFirstToken?: number;
                    };
                    provider?: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "request_id": "89bb34cb-e396-55f3-8030-46c7c6bbfd15"
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** Format: uuid */
                            request_id: string;
                        };
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    logHeliconeTrace: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "providerRequest": {
                 *         "url": "https://api.openai.com/v1/chat/completions",
                 *         "json": {
                 *           "model": "gpt-4o-mini",
                 *           "messages": [
                 *             {
                 *               "role": "user",
                 *               "content": "Hello"
                 *             }
                 *           ]
                 *         },
                 *         "meta": {
                 *           "Helicone-User-Id": "user-1842"
                 *         }
                 *       },
                 *       "providerResponse": {
                 *         "json": {
                 *           "choices": [
                 *             {
                 *               "message": {
                 *                 "role": "assistant",
                 *                 "content": "Hi! How can I help?"
                 *               }
                 *             }
                 *           ],
                 *           "usage": {
                 *             "prompt_tokens": 8,
                 *             "completion_tokens": 6
                 *           }
                 *         },
                 *         "status": 200,
                 *         "headers": {}
                 *       },
                 *       "timing": {
                 *         "startTime": {
                 *           "seconds": 1795685400,
                 *           "milliseconds": 0
                 *         },
                 *         "endTime": {
                 *           "seconds": 1795685400,
                 *           "milliseconds": 850
                 *         }
                 *       },
                 *       "provider": "openai"
                 *     }
                 */
                "application/json": {
                    providerRequest: {
                        /** @default  */
                        url?: string;
                        json?: unknown;
                        meta?: {
                            [key: string]: unknown;
                        };
                    };
                    providerResponse: {
                        json?: unknown;
                        textBody?: string;
                        /** @default 200 */
                        status?: number;
                        headers?: {
                            [key: string]: unknown;
                        };
                    };
                    timing: {
                        startTime: {
                            /** Format: int64 */
                            seconds: number;
                            milliseconds: number;
                        } | string | number;
                        endTime: {
                            /** Format: int64 */
                            seconds: number;
                            milliseconds: number;
                        } | string | number;
                        timeToFirstToken?: number;
                    };
                    provider?: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "request_id": "89bb34cb-e396-55f3-8030-46c7c6bbfd15"
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** Format: uuid */
                            request_id: string;
                        };
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    exportTraces: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/x-protobuf": string;
                /**
                 * @example {
                 *       "resourceSpans": [
                 *         {
                 *           "resource": {
                 *             "attributes": [
                 *               {
                 *                 "key": "service.name",
                 *                 "value": {
                 *                   "stringValue": "support-bot"
                 *                 }
                 *               }
                 *             ]
                 *           },
                 *           "scopeSpans": [
                 *             {
                 *               "scope": {
                 *                 "name": "openinference"
                 *               },
                 *               "spans": [
                 *                 {
                 *                   "traceId": "5b8efff798038103d269b633813fc60c",
                 *                   "spanId": "eee19b7ec3c1b174",
                 *                   "name": "ChatCompletion",
                 *                   "kind": 3,
                 *                   "startTimeUnixNano": "1795685400000000000",
                 *                   "endTimeUnixNano": "1795685401200000000",
                 *                   "attributes": [
                 *                     {
                 *                       "key": "gen_ai.system",
                 *                       "value": {
                 *                         "stringValue": "openai"
                 *                       }
                 *                     },
                 *                     {
                 *                       "key": "gen_ai.request.model",
                 *                       "value": {
                 *                         "stringValue": "gpt-4o-mini"
                 *                       }
                 *                     },
                 *                     {
                 *                       "key": "gen_ai.usage.input_tokens",
                 *                       "value": {
                 *                         "intValue": "42"
                 *                       }
                 *                     },
                 *                     {
                 *                       "key": "gen_ai.usage.output_tokens",
                 *                       "value": {
                 *                         "intValue": "9"
                 *                       }
                 *                     }
                 *                   ],
                 *                   "status": {
                 *                     "code": 1
                 *                   }
                 *                 }
                 *               ]
                 *             }
                 *           ]
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    resourceSpans?: Record<string, never>[];
                };
            };
        };
        responses: {
            /** @description Accepted: the ExportTraceServiceResponse, in the encoding of the request */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/x-protobuf": string;
                    /** @example {} */
                    "application/json": {
                        partialSuccess?: {
                            /** @description int64 as decimal text */
                            rejectedSpans?: string;
                            errorMessage?: string;
                        };
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    exportTracesOtel: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/x-protobuf": string;
                /**
                 * @example {
                 *       "resourceSpans": [
                 *         {
                 *           "resource": {
                 *             "attributes": [
                 *               {
                 *                 "key": "service.name",
                 *                 "value": {
                 *                   "stringValue": "support-bot"
                 *                 }
                 *               }
                 *             ]
                 *           },
                 *           "scopeSpans": [
                 *             {
                 *               "scope": {
                 *                 "name": "openinference"
                 *               },
                 *               "spans": [
                 *                 {
                 *                   "traceId": "5b8efff798038103d269b633813fc60c",
                 *                   "spanId": "eee19b7ec3c1b174",
                 *                   "name": "ChatCompletion",
                 *                   "kind": 3,
                 *                   "startTimeUnixNano": "1795685400000000000",
                 *                   "endTimeUnixNano": "1795685401200000000",
                 *                   "attributes": [
                 *                     {
                 *                       "key": "gen_ai.system",
                 *                       "value": {
                 *                         "stringValue": "openai"
                 *                       }
                 *                     },
                 *                     {
                 *                       "key": "gen_ai.request.model",
                 *                       "value": {
                 *                         "stringValue": "gpt-4o-mini"
                 *                       }
                 *                     },
                 *                     {
                 *                       "key": "gen_ai.usage.input_tokens",
                 *                       "value": {
                 *                         "intValue": "42"
                 *                       }
                 *                     },
                 *                     {
                 *                       "key": "gen_ai.usage.output_tokens",
                 *                       "value": {
                 *                         "intValue": "9"
                 *                       }
                 *                     }
                 *                   ],
                 *                   "status": {
                 *                     "code": 1
                 *                   }
                 *                 }
                 *               ]
                 *             }
                 *           ]
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    resourceSpans?: Record<string, never>[];
                };
            };
        };
        responses: {
            /** @description Accepted: the ExportTraceServiceResponse, in the encoding of the request */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/x-protobuf": string;
                    /** @example {} */
                    "application/json": {
                        partialSuccess?: {
                            /** @description int64 as decimal text */
                            rejectedSpans?: string;
                            errorMessage?: string;
                        };
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    exportTracesHelicone: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/x-protobuf": string;
                /**
                 * @example {
                 *       "resourceSpans": [
                 *         {
                 *           "resource": {
                 *             "attributes": [
                 *               {
                 *                 "key": "service.name",
                 *                 "value": {
                 *                   "stringValue": "support-bot"
                 *                 }
                 *               }
                 *             ]
                 *           },
                 *           "scopeSpans": [
                 *             {
                 *               "scope": {
                 *                 "name": "openinference"
                 *               },
                 *               "spans": [
                 *                 {
                 *                   "traceId": "5b8efff798038103d269b633813fc60c",
                 *                   "spanId": "eee19b7ec3c1b174",
                 *                   "name": "ChatCompletion",
                 *                   "kind": 3,
                 *                   "startTimeUnixNano": "1795685400000000000",
                 *                   "endTimeUnixNano": "1795685401200000000",
                 *                   "attributes": [
                 *                     {
                 *                       "key": "gen_ai.system",
                 *                       "value": {
                 *                         "stringValue": "openai"
                 *                       }
                 *                     },
                 *                     {
                 *                       "key": "gen_ai.request.model",
                 *                       "value": {
                 *                         "stringValue": "gpt-4o-mini"
                 *                       }
                 *                     },
                 *                     {
                 *                       "key": "gen_ai.usage.input_tokens",
                 *                       "value": {
                 *                         "intValue": "42"
                 *                       }
                 *                     },
                 *                     {
                 *                       "key": "gen_ai.usage.output_tokens",
                 *                       "value": {
                 *                         "intValue": "9"
                 *                       }
                 *                     }
                 *                   ],
                 *                   "status": {
                 *                     "code": 1
                 *                   }
                 *                 }
                 *               ]
                 *             }
                 *           ]
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    resourceSpans?: Record<string, never>[];
                };
            };
        };
        responses: {
            /** @description Accepted: the ExportTraceServiceResponse, in the encoding of the request */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/x-protobuf": string;
                    /** @example {} */
                    "application/json": {
                        partialSuccess?: {
                            /** @description int64 as decimal text */
                            rejectedSpans?: string;
                            errorMessage?: string;
                        };
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getSession: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The session id (at most 100 characters in a path)
                 * @example ticket-5521
                 */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "session_id": "ticket-5521",
                     *         "session_name": "Support triage",
                     *         "total_requests": 1,
                     *         "total_cost": 0.0000117,
                     *         "total_tokens": 51,
                     *         "truncated": false,
                     *         "requests": [
                     *           {
                     *             "request_id": "b0e59b83-0614-5173-b173-f5b89613d1d6",
                     *             "parent_request_id": null,
                     *             "depth": 0,
                     *             "created_at": "2026-11-20T09:30:00.000Z",
                     *             "completed_at": "2026-11-20T09:30:01.240Z",
                     *             "latency_ms": 1240,
                     *             "provider": "openai",
                     *             "model": "gpt-4o-mini",
                     *             "status": 200,
                     *             "prompt_tokens": 42,
                     *             "completion_tokens": 9,
                     *             "total_tokens": 51,
                     *             "cost_usd": 0.0000117,
                     *             "user_id": "user-1842",
                     *             "session_path": "/triage/summary",
                     *             "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
                     *             "span_id": "00f067aa0ba902b7",
                     *             "parent_span_id": ""
                     *           }
                     *         ]
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["SessionDetail"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Default Response */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The query exceeded a query limit: `error` names it and its value */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    querySessions: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "timeFilter": {
                 *         "startTimeUnixMs": 1795046400000,
                 *         "endTimeUnixMs": 1795305600000
                 *       },
                 *       "timezoneDifference": 0,
                 *       "filter": "all",
                 *       "limit": 25,
                 *       "sort": {
                 *         "latest_request_created_at": "desc"
                 *       }
                 *     }
                 */
                "application/json": {
                    /** @description Case-insensitive substring of the session id or name */
                    search?: string;
                    /** @description Requests with startTimeUnixMs <= created_at < endTimeUnixMs */
                    timeFilter: {
                        /** Format: int64 */
                        startTimeUnixMs: number;
                        /** Format: int64 */
                        endTimeUnixMs: number;
                    };
                    nameEquals?: string;
                    /** @description Minutes, JavaScript getTimezoneOffset() convention (UTC+2 is -120); offsets that exist, ±14:00 */
                    timezoneDifference: number;
                    filter: components["schemas"]["FilterNode"];
                    /**
                     * @description Records skipped
                     * @default 0
                     */
                    offset?: number;
                    /**
                     * @description Records per page
                     * @default 50
                     */
                    limit?: number;
                    /**
                     * Format: int64
                     * @description Alias: the page, 0-indexed (offset = page × pageSize); offset must then be 0 or left out
                     */
                    page?: number;
                    /** @description Alias of limit, used with page */
                    pageSize?: number;
                    /** @description One field: asc or desc; default {created_at: "desc"}; ties broken by session_id */
                    sort?: {
                        /** @enum {string} */
                        created_at?: "asc" | "desc";
                        /** @enum {string} */
                        latest_request_created_at?: "asc" | "desc";
                        /** @enum {string} */
                        total_cost?: "asc" | "desc";
                        /** @enum {string} */
                        total_requests?: "asc" | "desc";
                        /** @enum {string} */
                        avg_latency?: "asc" | "desc";
                    };
                    /** @description The next_cursor of the previous page (same sort); offset must then be 0 or left out */
                    cursor?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "session_id": "ticket-5521",
                     *           "session_name": "Support triage",
                     *           "created_at": "2026-11-20T09:30:00.000+00:00",
                     *           "latest_request_created_at": "2026-11-20T09:30:00.000+00:00",
                     *           "total_cost": 0.0000117,
                     *           "total_requests": 1,
                     *           "prompt_tokens": 42,
                     *           "completion_tokens": 9,
                     *           "total_tokens": 51,
                     *           "avg_latency": 1240,
                     *           "user_ids": [
                     *             "user-1842"
                     *           ]
                     *         }
                     *       ],
                     *       "error": null,
                     *       "next_cursor": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["Session"][];
                        error: string | null;
                        /** @description Pass as cursor (with the same sort) for the next page; null when this page has fewer rows than limit (a full last page is followed by an empty one) */
                        next_cursor: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The query exceeded a query limit: `error` names it and its value */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    countSessions: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "timeFilter": {
                 *         "startTimeUnixMs": 1795046400000,
                 *         "endTimeUnixMs": 1795305600000
                 *       },
                 *       "timezoneDifference": 0,
                 *       "filter": "all",
                 *       "limit": 25,
                 *       "sort": {
                 *         "latest_request_created_at": "desc"
                 *       }
                 *     }
                 */
                "application/json": {
                    /** @description Case-insensitive substring of the session id or name */
                    search?: string;
                    /** @description Requests with startTimeUnixMs <= created_at < endTimeUnixMs */
                    timeFilter: {
                        /** Format: int64 */
                        startTimeUnixMs: number;
                        /** Format: int64 */
                        endTimeUnixMs: number;
                    };
                    nameEquals?: string;
                    /** @description Minutes, JavaScript getTimezoneOffset() convention (UTC+2 is -120); offsets that exist, ±14:00 */
                    timezoneDifference: number;
                    filter: components["schemas"]["FilterNode"];
                    /**
                     * @description Records skipped
                     * @default 0
                     */
                    offset?: number;
                    /**
                     * @description Records per page
                     * @default 50
                     */
                    limit?: number;
                    /**
                     * Format: int64
                     * @description Alias: the page, 0-indexed (offset = page × pageSize); offset must then be 0 or left out
                     */
                    page?: number;
                    /** @description Alias of limit, used with page */
                    pageSize?: number;
                    /** @description One field: asc or desc; default {created_at: "desc"}; ties broken by session_id */
                    sort?: {
                        /** @enum {string} */
                        created_at?: "asc" | "desc";
                        /** @enum {string} */
                        latest_request_created_at?: "asc" | "desc";
                        /** @enum {string} */
                        total_cost?: "asc" | "desc";
                        /** @enum {string} */
                        total_requests?: "asc" | "desc";
                        /** @enum {string} */
                        avg_latency?: "asc" | "desc";
                    };
                    /** @description The next_cursor of the previous page (same sort); offset must then be 0 or left out */
                    cursor?: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "count": 1
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** Format: int64 */
                            count: number;
                        };
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The query exceeded a query limit: `error` names it and its value */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listScores: {
        parameters: {
            query?: {
                id?: string;
                request_id?: string;
                session_id?: string;
                /**
                 * @description The score’s name, e.g. helpfulness; `feedback` is the feedback (boolean)
                 * @example helpfulness
                 */
                name?: string;
                source?: "api" | "annotation" | "eval";
                /** @description Only scores of this status (docs/scores.md); orphaned reports scores whose target never came */
                status?: "applied" | "pending" | "orphaned";
                /** @example 10 */
                limit?: number;
                /** @description The next_cursor of the previous page: the page after it, by the same sort */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "5d8b7e35-0a1c-5f4e-8b2d-9c3e7f1a6b42",
                     *           "target": {
                     *             "request_id": "7b7e961d-254e-5401-8ee5-9452b893e55b"
                     *           },
                     *           "name": "helpfulness",
                     *           "value": 0.9,
                     *           "data_type": "numeric",
                     *           "source": "annotation",
                     *           "comment": "",
                     *           "created_at": "2026-11-27T09:01:00.000Z",
                     *           "status": "applied"
                     *         }
                     *       ],
                     *       "error": null,
                     *       "next_cursor": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["Score"][];
                        error: string | null;
                        /** @description Pass as cursor (with the same sort) for the next page; null when this page has fewer rows than limit (a full last page is followed by an empty one) */
                        next_cursor: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The query exceeded a query limit: `error` names it and its value */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createScore: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "target": {
                 *         "request_id": "7b7e961d-254e-5401-8ee5-9452b893e55b"
                 *       },
                 *       "name": "helpfulness",
                 *       "value": 0.9,
                 *       "source": "annotation"
                 *     }
                 */
                "application/json": {
                    /** @description What the score grades: one request, or one session */
                    target: {
                        /** Format: uuid */
                        request_id: string;
                    } | {
                        session_id: string;
                    };
                    /** @description The score’s name, e.g. helpfulness; `feedback` is the feedback (boolean) */
                    name: string;
                    /** @description A number (numeric), true or false (boolean), or a category (categorical) */
                    value: number | boolean | string;
                    /**
                     * @description Who graded: api (default), annotation (a person), eval (an evaluator)
                     * @default api
                     * @enum {string}
                     */
                    source?: "api" | "annotation" | "eval";
                    comment?: string;
                    /**
                     * Format: uuid
                     * @description Upsert by this id. Without it the id is derived from target, name and source, so sending the same again replaces it
                     */
                    id?: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "5d8b7e35-0a1c-5f4e-8b2d-9c3e7f1a6b42",
                     *         "status": "accepted"
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["AcceptedScore"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createScores: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "scores": [
                 *         {
                 *           "target": {
                 *             "request_id": "7b7e961d-254e-5401-8ee5-9452b893e55b"
                 *           },
                 *           "name": "faithfulness",
                 *           "value": 0.7,
                 *           "source": "eval"
                 *         },
                 *         {
                 *           "target": {
                 *             "session_id": "ticket-5521"
                 *           },
                 *           "name": "resolved",
                 *           "value": true,
                 *           "source": "eval"
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    /** @description Each as POST /v1/scores takes it; all are taken, or none */
                    scores: {
                        /** @description What the score grades: one request, or one session */
                        target: {
                            /** Format: uuid */
                            request_id: string;
                        } | {
                            session_id: string;
                        };
                        /** @description The score’s name, e.g. helpfulness; `feedback` is the feedback (boolean) */
                        name: string;
                        /** @description A number (numeric), true or false (boolean), or a category (categorical) */
                        value: number | boolean | string;
                        /**
                         * @description Who graded: api (default), annotation (a person), eval (an evaluator)
                         * @default api
                         * @enum {string}
                         */
                        source?: "api" | "annotation" | "eval";
                        comment?: string;
                        /**
                         * Format: uuid
                         * @description Upsert by this id. Without it the id is derived from target, name and source, so sending the same again replaces it
                         */
                        id?: string;
                    }[];
                };
            };
        };
        responses: {
            /** @description Default Response */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "ids": [
                     *           "1f0c2a7e-3b9d-5c4e-a8f1-6d2e9b7c3a51",
                     *           "8e4d1b6c-2a7f-5e3b-9c0d-4f1a7e2b6c83"
                     *         ],
                     *         "status": "accepted"
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["AcceptedScores"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    deleteScore: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 5d8b7e35-0a1c-5f4e-8b2d-9c3e7f1a6b42 */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": null,
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: Record<string, never> | null;
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The query exceeded a query limit: `error` names it and its value */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    addRequestScores: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 7b7e961d-254e-5401-8ee5-9452b893e55b */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "scores": {
                 *         "accuracy": 0.82,
                 *         "hallucination": false
                 *       }
                 *     }
                 */
                "application/json": {
                    /** @description Score name to value; at most 50 */
                    scores: {
                        [key: string]: number | boolean;
                    };
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": null,
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: Record<string, never> | null;
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    addRequestFeedback: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 7b7e961d-254e-5401-8ee5-9452b893e55b */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "rating": true
                 *     }
                 */
                "application/json": {
                    /** @description true: a good answer */
                    rating: boolean;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": null,
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: Record<string, never> | null;
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    setRequestProperty: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 7b7e961d-254e-5401-8ee5-9452b893e55b */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "key": "reviewed-by",
                 *       "value": "support"
                 *     }
                 */
                "application/json": {
                    key: string;
                    value: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": null,
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: Record<string, never> | null;
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listScoreConfigs: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "c0a8012e-5b1f-5e3a-9d41-2f6c3b7a9e10",
                     *           "name": "helpfulness",
                     *           "data_type": "numeric",
                     *           "min": 0,
                     *           "max": 1,
                     *           "categories": null,
                     *           "description": "How well the answer helped, 0 to 1",
                     *           "created_at": "2026-11-27T09:00:00.000Z"
                     *         }
                     *       ],
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["ScoreConfig"][];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createScoreConfig: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "helpfulness",
                 *       "data_type": "numeric",
                 *       "min": 0,
                 *       "max": 1,
                 *       "description": "How well the answer helped, 0 to 1"
                 *     }
                 */
                "application/json": {
                    /** @description The score’s name, e.g. helpfulness; `feedback` is the feedback (boolean) */
                    name: string;
                    /** @enum {string} */
                    data_type: "numeric" | "boolean" | "categorical";
                    /** @description numeric only: the least value taken */
                    min?: number;
                    /** @description numeric only: the greatest value taken */
                    max?: number;
                    /** @description categorical only (and required there): the values taken */
                    categories?: string[];
                    /** @default  */
                    description?: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "c0a8012e-5b1f-5e3a-9d41-2f6c3b7a9e10",
                     *         "name": "helpfulness",
                     *         "data_type": "numeric",
                     *         "min": 0,
                     *         "max": 1,
                     *         "categories": null,
                     *         "description": "How well the answer helped, 0 to 1",
                     *         "created_at": "2026-11-27T09:00:00.000Z"
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["ScoreConfig"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Conflicts with the current state: `error` says how */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    deleteScoreConfig: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example c0a8012e-5b1f-5e3a-9d41-2f6c3b7a9e10 */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": null,
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: Record<string, never> | null;
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    queryMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "timeFilter": {
                 *         "startTimeUnixMs": 1795046400000,
                 *         "endTimeUnixMs": 1795305600000
                 *       },
                 *       "measures": [
                 *         "count",
                 *         "cost_sum",
                 *         "latency_p95"
                 *       ],
                 *       "dimensions": [
                 *         "model"
                 *       ],
                 *       "granularity": "day"
                 *     }
                 */
                "application/json": components["schemas"]["MetricsQuery"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "granularity": "day",
                     *         "buckets": [
                     *           "2026-11-19T00:00:00.000+00:00",
                     *           "2026-11-20T00:00:00.000+00:00",
                     *           "2026-11-21T00:00:00.000+00:00"
                     *         ],
                     *         "series": [
                     *           {
                     *             "dimensions": {
                     *               "model": "gpt-4o-mini"
                     *             },
                     *             "totals": {
                     *               "count": 1,
                     *               "cost_sum": 0.0000117,
                     *               "latency_p95": 1240
                     *             },
                     *             "values": {
                     *               "count": [
                     *                 0,
                     *                 1,
                     *                 0
                     *               ],
                     *               "cost_sum": [
                     *                 0,
                     *                 0.0000117,
                     *                 0
                     *               ],
                     *               "latency_p95": [
                     *                 null,
                     *                 1240,
                     *                 null
                     *               ]
                     *             }
                     *           }
                     *         ],
                     *         "totals": {
                     *           "count": 1,
                     *           "cost_sum": 0.0000117,
                     *           "latency_p95": 1240
                     *         }
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["MetricsAnswer"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The query exceeded a query limit: `error` names it and its value */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    querySql: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "sql": "SELECT model, count() AS requests, round(sum(cost), 6) AS cost_usd FROM requests WHERE request_created_at >= {since:DateTime64(3)} GROUP BY model ORDER BY requests DESC LIMIT 10",
                 *       "params": {
                 *         "since": "2026-11-01 00:00:00.000"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["SqlQuery"];
            };
        };
        responses: {
            /** @description The rows (json), or the file (jsonl, csv, tsv, parquet) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "columns": [
                     *           {
                     *             "name": "model",
                     *             "type": "LowCardinality(String)"
                     *           },
                     *           {
                     *             "name": "requests",
                     *             "type": "UInt64"
                     *           },
                     *           {
                     *             "name": "cost_usd",
                     *             "type": "Float64"
                     *           }
                     *         ],
                     *         "rows": [
                     *           {
                     *             "model": "gpt-4o-mini",
                     *             "requests": "4",
                     *             "cost_usd": 0.000033
                     *           }
                     *         ],
                     *         "row_count": 1,
                     *         "statistics": {
                     *           "elapsed_ms": 8
                     *         }
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["SqlResult"];
                        error: string | null;
                    };
                    "application/x-ndjson": string;
                    "text/csv": string;
                    "text/tab-separated-values": string;
                    "application/vnd.apache.parquet": string;
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The query exceeded a query limit: `error` names it and its value */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getSqlSchema: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "tables": [
                     *           {
                     *             "name": "requests",
                     *             "description": "Your organization's requests, one row each (deduplicated: no FINAL needed).",
                     *             "columns": [
                     *               {
                     *                 "name": "request_id",
                     *                 "type": "UUID",
                     *                 "description": "The request's id."
                     *               },
                     *               {
                     *                 "name": "request_created_at",
                     *                 "type": "DateTime64(3, 'UTC')",
                     *                 "description": "When the model request was sent (UTC, milliseconds)."
                     *               },
                     *               {
                     *                 "name": "response_created_at",
                     *                 "type": "DateTime64(3, 'UTC')",
                     *                 "description": "When the response ended (UTC, milliseconds)."
                     *               },
                     *               {
                     *                 "name": "latency",
                     *                 "type": "UInt32",
                     *                 "description": "Milliseconds from request to end of response."
                     *               }
                     *             ]
                     *           },
                     *           {
                     *             "name": "sessions",
                     *             "description": "Your organization's sessions (requests with a session id), one row each, with their totals.",
                     *             "columns": [
                     *               {
                     *                 "name": "session_id",
                     *                 "type": "String",
                     *                 "description": "The session's id."
                     *               },
                     *               {
                     *                 "name": "session_name",
                     *                 "type": "String",
                     *                 "description": "The name its latest request gave it."
                     *               },
                     *               {
                     *                 "name": "first_request_at",
                     *                 "type": "DateTime64(3, 'UTC')",
                     *                 "description": "When its first request was sent."
                     *               },
                     *               {
                     *                 "name": "last_request_at",
                     *                 "type": "DateTime64(3, 'UTC')",
                     *                 "description": "When its last request was sent."
                     *               }
                     *             ]
                     *           },
                     *           {
                     *             "name": "scores",
                     *             "description": "Your organization's live scores (deleted ones left out, each score once), of requests and sessions.",
                     *             "columns": [
                     *               {
                     *                 "name": "id",
                     *                 "type": "UUID",
                     *                 "description": "The score's id."
                     *               },
                     *               {
                     *                 "name": "request_id",
                     *                 "type": "Nullable(UUID)",
                     *                 "description": "The request it grades; NULL for a score of a session."
                     *               },
                     *               {
                     *                 "name": "name",
                     *                 "type": "String",
                     *                 "description": "The score's name, e.g. helpfulness."
                     *               },
                     *               {
                     *                 "name": "value",
                     *                 "type": "Float64",
                     *                 "description": "The number: a numeric score, 1 or 0 for a boolean one, 0 for a categorical one."
                     *               }
                     *             ]
                     *           }
                     *         ]
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["SqlSchema"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createPrompt: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "ticket-summary",
                 *       "tags": [
                 *         "support"
                 *       ],
                 *       "promptBody": {
                 *         "model": "gpt-4o-mini",
                 *         "messages": [
                 *           {
                 *             "role": "system",
                 *             "content": "You summarise support tickets in one line."
                 *           },
                 *           {
                 *             "role": "user",
                 *             "content": "{{ticket}}"
                 *           }
                 *         ],
                 *         "temperature": 0.2,
                 *         "max_tokens": 200
                 *       }
                 *     }
                 */
                "application/json": {
                    name: string;
                    /** @default [] */
                    tags?: string[];
                    promptBody: components["schemas"]["PromptBody"];
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e",
                     *         "versionId": "fe83534a-8ca8-5913-9f02-4856a04ac1c0"
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** Format: uuid */
                            id: string;
                            /** Format: uuid */
                            versionId: string;
                        };
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Conflicts with the current state: `error` says how */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    queryPrompts: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "search": "ticket",
                 *       "tagsFilter": [
                 *         "support"
                 *       ],
                 *       "page": 0,
                 *       "pageSize": 10
                 *     }
                 */
                "application/json": {
                    search: string;
                    tagsFilter: string[];
                    /** @description 0-indexed; required unless offset or limit is given */
                    page?: number;
                    /**
                     * @description Required unless offset or limit is given
                     * @enum {integer}
                     */
                    pageSize?: 10 | 25 | 50 | 100;
                    /** @description Alias (Tally's paging elsewhere): prompts skipped; with limit, instead of page and pageSize */
                    offset?: number;
                    /** @description Alias: prompts per page (default 10), instead of pageSize */
                    limit?: number;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e",
                     *           "name": "ticket-summary-v2",
                     *           "tags": [
                     *             "support",
                     *             "triage"
                     *           ],
                     *           "created_at": "2026-11-26T10:15:17.169Z"
                     *         }
                     *       ],
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["Prompt"][];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getPrompt: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example f6fbdaef-c1ab-51c9-b218-52ad5caaa49e */
                promptId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e",
                     *         "name": "ticket-summary-v2",
                     *         "tags": [
                     *           "support",
                     *           "triage"
                     *         ],
                     *         "created_at": "2026-11-26T10:15:17.169Z"
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["Prompt"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    renamePrompt: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example f6fbdaef-c1ab-51c9-b218-52ad5caaa49e */
                promptId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "ticket-summary-v2"
                 *     }
                 */
                "application/json": {
                    name: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e",
                     *         "name": "ticket-summary-v2",
                     *         "tags": [
                     *           "support",
                     *           "triage"
                     *         ],
                     *         "created_at": "2026-11-26T10:15:17.169Z"
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["Prompt"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Conflicts with the current state: `error` says how */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    setPromptTags: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example f6fbdaef-c1ab-51c9-b218-52ad5caaa49e */
                promptId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "tags": [
                 *         "support",
                 *         "triage"
                 *       ]
                 *     }
                 */
                "application/json": {
                    tags: string[];
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e",
                     *         "name": "ticket-summary-v2",
                     *         "tags": [
                     *           "support",
                     *           "triage"
                     *         ],
                     *         "created_at": "2026-11-26T10:15:17.169Z"
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["Prompt"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    deletePrompt: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example f6fbdaef-c1ab-51c9-b218-52ad5caaa49e */
                promptId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": null,
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: Record<string, never> | null;
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listPromptTags: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         "support",
                     *         "triage"
                     *       ],
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: string[];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listPromptEnvironments: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         "production",
                     *         "staging"
                     *       ],
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: string[];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createPromptVersion: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "promptId": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e",
                 *       "promptVersionId": "fe83534a-8ca8-5913-9f02-4856a04ac1c0",
                 *       "newMajorVersion": false,
                 *       "environment": "staging",
                 *       "commitMessage": "Shorter summaries",
                 *       "promptBody": {
                 *         "model": "gpt-4o-mini",
                 *         "messages": [
                 *           {
                 *             "role": "system",
                 *             "content": "You summarise support tickets in one line."
                 *           },
                 *           {
                 *             "role": "user",
                 *             "content": "{{ticket}}"
                 *           }
                 *         ],
                 *         "temperature": 0.2,
                 *         "max_tokens": 120
                 *       }
                 *     }
                 */
                "application/json": {
                    /** Format: uuid */
                    promptId: string;
                    /**
                     * Format: uuid
                     * @description The version this one is based on
                     */
                    promptVersionId: string;
                    newMajorVersion: boolean;
                    /** @description Deploy the new version to this environment at once */
                    environment?: string;
                    commitMessage: string;
                    promptBody: components["schemas"]["PromptBody"];
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "71dd6e63-a6e5-5f3c-bec3-4a4a301a633b"
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** Format: uuid */
                            id: string;
                        };
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    queryPromptVersions: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "promptId": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e"
                 *     }
                 */
                "application/json": {
                    /** Format: uuid */
                    promptId: string;
                    /** Format: int64 */
                    majorVersion?: number;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "71dd6e63-a6e5-5f3c-bec3-4a4a301a633b",
                     *           "prompt_id": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e",
                     *           "model": "gpt-4o-mini",
                     *           "major_version": 1,
                     *           "minor_version": 1,
                     *           "commit_message": "Shorter summaries",
                     *           "environments": [
                     *             "production",
                     *             "staging"
                     *           ],
                     *           "created_at": "2026-11-26T10:15:17.198Z",
                     *           "storage_url": "prompts/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/f6fbdaef-c1ab-51c9-b218-52ad5caaa49e/71dd6e63-a6e5-5f3c-bec3-4a4a301a633b.json"
                     *         }
                     *       ],
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["PromptVersion"][];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    countPromptVersions: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "promptId": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e"
                 *     }
                 */
                "application/json": {
                    /** Format: uuid */
                    promptId: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "totalVersions": 2,
                     *         "majorVersions": 1
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** Format: int64 */
                            totalVersions: number;
                            /** Format: int64 */
                            majorVersions: number;
                        };
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getPromptVersion: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "promptVersionId": "71dd6e63-a6e5-5f3c-bec3-4a4a301a633b"
                 *     }
                 */
                "application/json": {
                    /** Format: uuid */
                    promptVersionId: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "71dd6e63-a6e5-5f3c-bec3-4a4a301a633b",
                     *         "prompt_id": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e",
                     *         "model": "gpt-4o-mini",
                     *         "major_version": 1,
                     *         "minor_version": 1,
                     *         "commit_message": "Shorter summaries",
                     *         "environments": [
                     *           "production",
                     *           "staging"
                     *         ],
                     *         "created_at": "2026-11-26T10:15:17.198Z",
                     *         "storage_url": "prompts/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/f6fbdaef-c1ab-51c9-b218-52ad5caaa49e/71dd6e63-a6e5-5f3c-bec3-4a4a301a633b.json",
                     *         "s3_url": "http://127.0.0.1:8787/blobs/prompts/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/f6fbdaef-c1ab-51c9-b218-52ad5caaa49e/71dd6e63-a6e5-5f3c-bec3-4a4a301a633b.json?expires=1795688717&signature=6f1c0e6d9b1a4c5e8f7a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70"
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["PromptVersionWithLink"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getProductionVersion: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "promptId": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e"
                 *     }
                 */
                "application/json": {
                    /** Format: uuid */
                    promptId: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "71dd6e63-a6e5-5f3c-bec3-4a4a301a633b",
                     *         "prompt_id": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e",
                     *         "model": "gpt-4o-mini",
                     *         "major_version": 1,
                     *         "minor_version": 1,
                     *         "commit_message": "Shorter summaries",
                     *         "environments": [
                     *           "production",
                     *           "staging"
                     *         ],
                     *         "created_at": "2026-11-26T10:15:17.198Z",
                     *         "storage_url": "prompts/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/f6fbdaef-c1ab-51c9-b218-52ad5caaa49e/71dd6e63-a6e5-5f3c-bec3-4a4a301a633b.json",
                     *         "s3_url": "http://127.0.0.1:8787/blobs/prompts/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/f6fbdaef-c1ab-51c9-b218-52ad5caaa49e/71dd6e63-a6e5-5f3c-bec3-4a4a301a633b.json?expires=1795688717&signature=6f1c0e6d9b1a4c5e8f7a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70"
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["PromptVersionWithLink"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getEnvironmentVersion: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "promptId": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e",
                 *       "environment": "staging"
                 *     }
                 */
                "application/json": {
                    /** Format: uuid */
                    promptId: string;
                    environment: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "71dd6e63-a6e5-5f3c-bec3-4a4a301a633b",
                     *         "prompt_id": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e",
                     *         "model": "gpt-4o-mini",
                     *         "major_version": 1,
                     *         "minor_version": 1,
                     *         "commit_message": "Shorter summaries",
                     *         "environments": [
                     *           "production",
                     *           "staging"
                     *         ],
                     *         "created_at": "2026-11-26T10:15:17.198Z",
                     *         "storage_url": "prompts/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/f6fbdaef-c1ab-51c9-b218-52ad5caaa49e/71dd6e63-a6e5-5f3c-bec3-4a4a301a633b.json",
                     *         "s3_url": "http://127.0.0.1:8787/blobs/prompts/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/f6fbdaef-c1ab-51c9-b218-52ad5caaa49e/71dd6e63-a6e5-5f3c-bec3-4a4a301a633b.json?expires=1795688717&signature=6f1c0e6d9b1a4c5e8f7a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70"
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["PromptVersionWithLink"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getPromptVersionWithBody: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "promptVersionId": "71dd6e63-a6e5-5f3c-bec3-4a4a301a633b"
                 *     }
                 */
                "application/json": {
                    /** Format: uuid */
                    promptVersionId: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "71dd6e63-a6e5-5f3c-bec3-4a4a301a633b",
                     *         "prompt_id": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e",
                     *         "model": "gpt-4o-mini",
                     *         "major_version": 1,
                     *         "minor_version": 1,
                     *         "commit_message": "Shorter summaries",
                     *         "environments": [
                     *           "production",
                     *           "staging"
                     *         ],
                     *         "created_at": "2026-11-26T10:15:17.198Z",
                     *         "storage_url": "prompts/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/f6fbdaef-c1ab-51c9-b218-52ad5caaa49e/71dd6e63-a6e5-5f3c-bec3-4a4a301a633b.json",
                     *         "s3_url": "http://127.0.0.1:8787/blobs/prompts/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/f6fbdaef-c1ab-51c9-b218-52ad5caaa49e/71dd6e63-a6e5-5f3c-bec3-4a4a301a633b.json?expires=1795688717&signature=6f1c0e6d9b1a4c5e8f7a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70",
                     *         "prompt_body": {
                     *           "model": "gpt-4o-mini",
                     *           "messages": [
                     *             {
                     *               "role": "system",
                     *               "content": "You summarise support tickets in one line."
                     *             },
                     *             {
                     *               "role": "user",
                     *               "content": "{{ticket}}"
                     *             }
                     *           ],
                     *           "temperature": 0.2,
                     *           "max_tokens": 120
                     *         }
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["PromptVersionWithBody"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getProductionVersionWithBody: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "promptId": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e"
                 *     }
                 */
                "application/json": {
                    /** Format: uuid */
                    promptId: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "71dd6e63-a6e5-5f3c-bec3-4a4a301a633b",
                     *         "prompt_id": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e",
                     *         "model": "gpt-4o-mini",
                     *         "major_version": 1,
                     *         "minor_version": 1,
                     *         "commit_message": "Shorter summaries",
                     *         "environments": [
                     *           "production",
                     *           "staging"
                     *         ],
                     *         "created_at": "2026-11-26T10:15:17.198Z",
                     *         "storage_url": "prompts/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/f6fbdaef-c1ab-51c9-b218-52ad5caaa49e/71dd6e63-a6e5-5f3c-bec3-4a4a301a633b.json",
                     *         "s3_url": "http://127.0.0.1:8787/blobs/prompts/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/f6fbdaef-c1ab-51c9-b218-52ad5caaa49e/71dd6e63-a6e5-5f3c-bec3-4a4a301a633b.json?expires=1795688717&signature=6f1c0e6d9b1a4c5e8f7a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70",
                     *         "prompt_body": {
                     *           "model": "gpt-4o-mini",
                     *           "messages": [
                     *             {
                     *               "role": "system",
                     *               "content": "You summarise support tickets in one line."
                     *             },
                     *             {
                     *               "role": "user",
                     *               "content": "{{ticket}}"
                     *             }
                     *           ],
                     *           "temperature": 0.2,
                     *           "max_tokens": 120
                     *         }
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["PromptVersionWithBody"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getEnvironmentVersionWithBody: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "promptId": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e",
                 *       "environment": "staging"
                 *     }
                 */
                "application/json": {
                    /** Format: uuid */
                    promptId: string;
                    environment: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "71dd6e63-a6e5-5f3c-bec3-4a4a301a633b",
                     *         "prompt_id": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e",
                     *         "model": "gpt-4o-mini",
                     *         "major_version": 1,
                     *         "minor_version": 1,
                     *         "commit_message": "Shorter summaries",
                     *         "environments": [
                     *           "production",
                     *           "staging"
                     *         ],
                     *         "created_at": "2026-11-26T10:15:17.198Z",
                     *         "storage_url": "prompts/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/f6fbdaef-c1ab-51c9-b218-52ad5caaa49e/71dd6e63-a6e5-5f3c-bec3-4a4a301a633b.json",
                     *         "s3_url": "http://127.0.0.1:8787/blobs/prompts/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/f6fbdaef-c1ab-51c9-b218-52ad5caaa49e/71dd6e63-a6e5-5f3c-bec3-4a4a301a633b.json?expires=1795688717&signature=6f1c0e6d9b1a4c5e8f7a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70",
                     *         "prompt_body": {
                     *           "model": "gpt-4o-mini",
                     *           "messages": [
                     *             {
                     *               "role": "system",
                     *               "content": "You summarise support tickets in one line."
                     *             },
                     *             {
                     *               "role": "user",
                     *               "content": "{{ticket}}"
                     *             }
                     *           ],
                     *           "temperature": 0.2,
                     *           "max_tokens": 120
                     *         }
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["PromptVersionWithBody"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getPromptBody: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 71dd6e63-a6e5-5f3c-bec3-4a4a301a633b */
                promptVersionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "model": "gpt-4o-mini",
                     *         "messages": [
                     *           {
                     *             "role": "system",
                     *             "content": "You summarise support tickets in one line."
                     *           },
                     *           {
                     *             "role": "user",
                     *             "content": "{{ticket}}"
                     *           }
                     *         ],
                     *         "temperature": 0.2,
                     *         "max_tokens": 120
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["PromptBody"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    deployPromptVersion: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "promptId": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e",
                 *       "promptVersionId": "71dd6e63-a6e5-5f3c-bec3-4a4a301a633b",
                 *       "environment": "production"
                 *     }
                 */
                "application/json": {
                    /** Format: uuid */
                    promptId: string;
                    /** Format: uuid */
                    promptVersionId: string;
                    environment: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "71dd6e63-a6e5-5f3c-bec3-4a4a301a633b",
                     *         "prompt_id": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e",
                     *         "model": "gpt-4o-mini",
                     *         "major_version": 1,
                     *         "minor_version": 1,
                     *         "commit_message": "Shorter summaries",
                     *         "environments": [
                     *           "production",
                     *           "staging"
                     *         ],
                     *         "created_at": "2026-11-26T10:15:17.198Z",
                     *         "storage_url": "prompts/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/f6fbdaef-c1ab-51c9-b218-52ad5caaa49e/71dd6e63-a6e5-5f3c-bec3-4a4a301a633b.json"
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["PromptVersion"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    undeployPromptVersion: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "promptId": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e",
                 *       "promptVersionId": "71dd6e63-a6e5-5f3c-bec3-4a4a301a633b",
                 *       "environment": "staging"
                 *     }
                 */
                "application/json": {
                    /** Format: uuid */
                    promptId: string;
                    /** Format: uuid */
                    promptVersionId: string;
                    environment: string;
                };
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "71dd6e63-a6e5-5f3c-bec3-4a4a301a633b",
                     *         "prompt_id": "f6fbdaef-c1ab-51c9-b218-52ad5caaa49e",
                     *         "model": "gpt-4o-mini",
                     *         "major_version": 1,
                     *         "minor_version": 1,
                     *         "commit_message": "Shorter summaries",
                     *         "environments": [
                     *           "production"
                     *         ],
                     *         "created_at": "2026-11-26T10:15:17.198Z",
                     *         "storage_url": "prompts/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/f6fbdaef-c1ab-51c9-b218-52ad5caaa49e/71dd6e63-a6e5-5f3c-bec3-4a4a301a633b.json"
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["PromptVersion"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    deletePromptVersion: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example f6fbdaef-c1ab-51c9-b218-52ad5caaa49e */
                promptId: string;
                /** @example fe83534a-8ca8-5913-9f02-4856a04ac1c0 */
                versionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": null,
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: Record<string, never> | null;
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listWebhooks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "3613d6fb-c9c6-5286-a919-506605f8a277",
                     *           "destination": "https://hooks.example.com/tally",
                     *           "config": {
                     *             "events": [
                     *               "request.completed",
                     *               "feedback.created"
                     *             ],
                     *             "sampleRate": 100,
                     *             "propertyFilters": [],
                     *             "filter": {
                     *               "request_response_rmt": {
                     *                 "status": {
                     *                   "gte": 500
                     *                 }
                     *               }
                     *             }
                     *           },
                     *           "includeData": true,
                     *           "state": "active",
                     *           "disabled_reason": null,
                     *           "created_at": "2026-11-26T10:15:17.265Z"
                     *         }
                     *       ],
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["Webhook"][];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "destination": "https://hooks.example.com/tally",
                 *       "config": {
                 *         "events": [
                 *           "request.completed",
                 *           "feedback.created"
                 *         ],
                 *         "sampleRate": 100,
                 *         "filter": {
                 *           "request_response_rmt": {
                 *             "status": {
                 *               "gte": 500
                 *             }
                 *           }
                 *         }
                 *       },
                 *       "includeData": true
                 *     }
                 */
                "application/json": {
                    /** @description HTTPS URL that receives deliveries */
                    destination: string;
                    /**
                     * @default {
                     *       "events": [
                     *         "request.completed"
                     *       ],
                     *       "sampleRate": 100,
                     *       "propertyFilters": []
                     *     }
                     */
                    config?: {
                        /**
                         * @description The events it gets: request.completed (the default alone), score.created, feedback.created (docs/webhooks.md)
                         * @default [
                         *       "request.completed"
                         *     ]
                         */
                        events?: ("request.completed" | "score.created" | "feedback.created")[];
                        /**
                         * @description Percentage of events sent, 0 to 100; decided per request, the same on every redelivery
                         * @default 100
                         */
                        sampleRate?: number;
                        /**
                         * @description Every {key, value} must equal the event's property of that key
                         * @default []
                         */
                        propertyFilters?: {
                            key: string;
                            value: string;
                        }[];
                        filter?: components["schemas"]["FilterNode"];
                    };
                    /**
                     * @description Whether deliveries carry the request and response bodies
                     * @default true
                     */
                    includeData?: boolean;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "3613d6fb-c9c6-5286-a919-506605f8a277",
                     *         "destination": "https://hooks.example.com/tally",
                     *         "config": {
                     *           "events": [
                     *             "request.completed",
                     *             "feedback.created"
                     *           ],
                     *           "sampleRate": 100,
                     *           "propertyFilters": [],
                     *           "filter": {
                     *             "request_response_rmt": {
                     *               "status": {
                     *                 "gte": 500
                     *               }
                     *             }
                     *           }
                     *         },
                     *         "includeData": true,
                     *         "state": "active",
                     *         "disabled_reason": null,
                     *         "created_at": "2026-11-26T10:15:17.265Z",
                     *         "hmac_key": "whsec_MfKQ9r8GKYqXG4Vi4wWx6mW+L0yF6XyKzzxVq3JqZ3g="
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["CreatedWebhook"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Conflicts with the current state: `error` says how */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    deleteWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 3613d6fb-c9c6-5286-a919-506605f8a277 */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": null,
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: Record<string, never> | null;
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    testWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 3613d6fb-c9c6-5286-a919-506605f8a277 */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "delivery_id": "afb04225-0a25-5a15-8db8-145e515ba0f2",
                     *         "delivered": true,
                     *         "status": 200,
                     *         "duration_ms": 84,
                     *         "error": null
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["WebhookTestResult"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listWebhookDeliveries: {
        parameters: {
            query?: {
                /** @description Records skipped */
                offset?: number;
                /**
                 * @description Records per page
                 * @example 10
                 */
                limit?: number;
                /** @description Alias: the page, 0-indexed (offset = page × pageSize); offset must then be 0 or left out */
                page?: number;
                /** @description Alias of limit, used with page */
                pageSize?: number;
                /** @description The next_cursor of the previous page: the page after it, by the same sort */
                cursor?: string;
                /** @example delivered */
                status?: "pending" | "delivered" | "failed";
            };
            header?: never;
            path: {
                /** @example 3613d6fb-c9c6-5286-a919-506605f8a277 */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "afb04225-0a25-5a15-8db8-145e515ba0f2",
                     *           "request_id": "7b7e961d-254e-5401-8ee5-9452b893e55b",
                     *           "event_key": "7b7e961d-254e-5401-8ee5-9452b893e55b",
                     *           "event": "webhook.test",
                     *           "status": "delivered",
                     *           "attempts": 1,
                     *           "last_attempt_at": "2026-11-26T10:15:17.275Z",
                     *           "last_response_status": 200,
                     *           "last_response_body": "ok",
                     *           "last_error": null,
                     *           "last_duration_ms": 84,
                     *           "next_attempt_at": null,
                     *           "created_at": "2026-11-26T10:15:17.279Z",
                     *           "delivered_at": "2026-11-26T10:15:17.275Z"
                     *         }
                     *       ],
                     *       "error": null,
                     *       "next_cursor": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["Delivery"][];
                        error: string | null;
                        /** @description Pass as cursor (with the same sort) for the next page; null when this page has fewer rows than limit (a full last page is followed by an empty one) */
                        next_cursor: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    retryWebhookDelivery: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 3613d6fb-c9c6-5286-a919-506605f8a277 */
                id: string;
                /** @example afb04225-0a25-5a15-8db8-145e515ba0f2 */
                deliveryId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "afb04225-0a25-5a15-8db8-145e515ba0f2",
                     *         "request_id": "7b7e961d-254e-5401-8ee5-9452b893e55b",
                     *         "event_key": "7b7e961d-254e-5401-8ee5-9452b893e55b",
                     *         "event": "webhook.test",
                     *         "status": "pending",
                     *         "attempts": 1,
                     *         "last_attempt_at": "2026-11-26T10:15:17.275Z",
                     *         "last_response_status": 503,
                     *         "last_response_body": "Service Unavailable",
                     *         "last_error": "HTTP 503",
                     *         "last_duration_ms": 3,
                     *         "next_attempt_at": "2026-11-26T10:15:17.297Z",
                     *         "created_at": "2026-11-26T10:15:17.279Z",
                     *         "delivered_at": null
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["Delivery"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    rotateWebhookKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 3613d6fb-c9c6-5286-a919-506605f8a277 */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "3613d6fb-c9c6-5286-a919-506605f8a277",
                     *         "hmac_key": "whsec_MfKQ9r8GKYqXG4Vi4wWx6mW+L0yF6XyKzzxVq3JqZ3g=",
                     *         "previous_key_expires_at": "2026-11-27T10:15:17.291Z"
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** Format: uuid */
                            id: string;
                            hmac_key: string;
                            /** Format: date-time */
                            previous_key_expires_at: string;
                        };
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Conflicts with the current state: `error` says how */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listExports: {
        parameters: {
            query?: {
                /** @description Records skipped */
                offset?: number;
                /**
                 * @description Records per page
                 * @example 10
                 */
                limit?: number;
                /** @description Alias: the page, 0-indexed (offset = page × pageSize); offset must then be 0 or left out */
                page?: number;
                /** @description Alias of limit, used with page */
                pageSize?: number;
                /** @description The next_cursor of the previous page: the page after it, by the same sort */
                cursor?: string;
                /** @example succeeded */
                status?: "queued" | "running" | "succeeded" | "failed";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "6e7f08fb-02f6-5411-a6c1-a3db5a70afd5",
                     *           "status": "succeeded",
                     *           "from": "2026-11-20T00:00:00.000Z",
                     *           "to": "2026-11-21T00:00:00.000Z",
                     *           "filter": "all",
                     *           "format": "parquet",
                     *           "schedule_id": null,
                     *           "attempts": 1,
                     *           "last_error": null,
                     *           "next_attempt_at": null,
                     *           "waiting_reason": null,
                     *           "created_at": "2026-11-26T10:15:17.303Z",
                     *           "started_at": "2026-11-26T10:15:17.313Z",
                     *           "finished_at": "2026-11-26T10:15:17.378Z",
                     *           "manifest": {
                     *             "export_id": "6e7f08fb-02f6-5411-a6c1-a3db5a70afd5",
                     *             "organization_id": "50fb8ae3-cc90-50f8-ab99-71652f7ec0c4",
                     *             "window": {
                     *               "from": "2026-11-20T00:00:00.000Z",
                     *               "to": "2026-11-21T00:00:00.000Z"
                     *             },
                     *             "filter": "all",
                     *             "format": "parquet",
                     *             "columns": [
                     *               "organization_id",
                     *               "request_id",
                     *               "request_created_at",
                     *               "response_created_at",
                     *               "latency",
                     *               "time_to_first_token",
                     *               "provider",
                     *               "model",
                     *               "status",
                     *               "target_url",
                     *               "prompt_tokens",
                     *               "completion_tokens",
                     *               "total_tokens",
                     *               "cost",
                     *               "cached",
                     *               "user_id",
                     *               "session_id",
                     *               "session_name",
                     *               "session_path",
                     *               "properties",
                     *               "prompt_id",
                     *               "prompt_version",
                     *               "request_body",
                     *               "response_body",
                     *               "trace_id",
                     *               "span_id",
                     *               "parent_span_id",
                     *               "scores",
                     *               "score_categories"
                     *             ],
                     *             "files": [
                     *               {
                     *                 "name": "part-00001.parquet",
                     *                 "rows": 1,
                     *                 "bytes": 13357,
                     *                 "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
                     *               }
                     *             ],
                     *             "total_rows": 1,
                     *             "counted_rows": 1,
                     *             "created_at": "2026-11-26T10:15:17.317Z",
                     *             "finished_at": "2026-11-26T10:15:17.373Z"
                     *           }
                     *         }
                     *       ],
                     *       "error": null,
                     *       "next_cursor": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["Export"][];
                        error: string | null;
                        /** @description Pass as cursor (with the same sort) for the next page; null when this page has fewer rows than limit (a full last page is followed by an empty one) */
                        next_cursor: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createExport: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "from": "2026-11-20T00:00:00Z",
                 *       "to": "2026-11-21T00:00:00Z",
                 *       "format": "parquet",
                 *       "filter": "all"
                 *     }
                 */
                "application/json": {
                    /** @description Start of the window, included */
                    from: string;
                    /** @description End of the window, excluded; at least TALLY_EXPORT_SETTLE_DELAY in the past */
                    to: string;
                    filter?: components["schemas"]["FilterNode"];
                    /**
                     * @description parquet (ClickHouse Parquet), csv (CSV with a header line) or jsonl (one JSON object per line)
                     * @enum {string}
                     */
                    format: "parquet" | "csv" | "jsonl";
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "6e7f08fb-02f6-5411-a6c1-a3db5a70afd5",
                     *         "status": "queued",
                     *         "from": "2026-11-20T00:00:00.000Z",
                     *         "to": "2026-11-21T00:00:00.000Z",
                     *         "filter": "all",
                     *         "format": "parquet",
                     *         "schedule_id": null,
                     *         "attempts": 0,
                     *         "last_error": null,
                     *         "next_attempt_at": "2026-11-26T10:15:17.303Z",
                     *         "waiting_reason": null,
                     *         "created_at": "2026-11-26T10:15:17.303Z",
                     *         "started_at": null,
                     *         "finished_at": null,
                     *         "manifest": null
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["Export"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listExportSchedules: {
        parameters: {
            query?: {
                /** @description Records skipped */
                offset?: number;
                /** @description Records per page */
                limit?: number;
                /** @description Alias: the page, 0-indexed (offset = page × pageSize); offset must then be 0 or left out */
                page?: number;
                /** @description Alias of limit, used with page */
                pageSize?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "4adec20c-17b3-52cf-837d-ff977b57190a",
                     *           "period": "daily",
                     *           "format": "jsonl",
                     *           "filter": "all",
                     *           "next_window_start": "2026-11-20T00:00:00.000Z",
                     *           "created_at": "2026-11-26T10:15:20.328Z"
                     *         }
                     *       ],
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["ExportSchedule"][];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createExportSchedule: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "period": "daily",
                 *       "format": "jsonl",
                 *       "filter": "all",
                 *       "start": "2026-11-20T00:00:00Z"
                 *     }
                 */
                "application/json": {
                    /**
                     * @description hourly: UTC hours; daily: UTC days
                     * @enum {string}
                     */
                    period: "hourly" | "daily";
                    /**
                     * @description parquet (ClickHouse Parquet), csv (CSV with a header line) or jsonl (one JSON object per line)
                     * @enum {string}
                     */
                    format: "parquet" | "csv" | "jsonl";
                    filter?: components["schemas"]["FilterNode"];
                    /** @description Start of the first window, on a period boundary and within the last 90 days (backfill); default: the start of the current period */
                    start?: string;
                };
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "4adec20c-17b3-52cf-837d-ff977b57190a",
                     *         "period": "daily",
                     *         "format": "jsonl",
                     *         "filter": "all",
                     *         "next_window_start": "2026-11-20T00:00:00.000Z",
                     *         "created_at": "2026-11-26T10:15:20.328Z"
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["ExportSchedule"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Conflicts with the current state: `error` says how */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than this endpoint accepts */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body's Content-Type is not application/json */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    deleteExportSchedule: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 4adec20c-17b3-52cf-837d-ff977b57190a */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": null,
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: Record<string, never> | null;
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getExport: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @example 6e7f08fb-02f6-5411-a6c1-a3db5a70afd5 */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": {
                     *         "id": "6e7f08fb-02f6-5411-a6c1-a3db5a70afd5",
                     *         "status": "succeeded",
                     *         "from": "2026-11-20T00:00:00.000Z",
                     *         "to": "2026-11-21T00:00:00.000Z",
                     *         "filter": "all",
                     *         "format": "parquet",
                     *         "schedule_id": null,
                     *         "attempts": 1,
                     *         "last_error": null,
                     *         "next_attempt_at": null,
                     *         "waiting_reason": null,
                     *         "created_at": "2026-11-26T10:15:17.303Z",
                     *         "started_at": "2026-11-26T10:15:17.313Z",
                     *         "finished_at": "2026-11-26T10:15:17.378Z",
                     *         "manifest": {
                     *           "export_id": "6e7f08fb-02f6-5411-a6c1-a3db5a70afd5",
                     *           "organization_id": "50fb8ae3-cc90-50f8-ab99-71652f7ec0c4",
                     *           "window": {
                     *             "from": "2026-11-20T00:00:00.000Z",
                     *             "to": "2026-11-21T00:00:00.000Z"
                     *           },
                     *           "filter": "all",
                     *           "format": "parquet",
                     *           "columns": [
                     *             "organization_id",
                     *             "request_id",
                     *             "request_created_at",
                     *             "response_created_at",
                     *             "latency",
                     *             "time_to_first_token",
                     *             "provider",
                     *             "model",
                     *             "status",
                     *             "target_url",
                     *             "prompt_tokens",
                     *             "completion_tokens",
                     *             "total_tokens",
                     *             "cost",
                     *             "cached",
                     *             "user_id",
                     *             "session_id",
                     *             "session_name",
                     *             "session_path",
                     *             "properties",
                     *             "prompt_id",
                     *             "prompt_version",
                     *             "request_body",
                     *             "response_body",
                     *             "trace_id",
                     *             "span_id",
                     *             "parent_span_id",
                     *             "scores",
                     *             "score_categories"
                     *           ],
                     *           "files": [
                     *             {
                     *               "name": "part-00001.parquet",
                     *               "rows": 1,
                     *               "bytes": 13357,
                     *               "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
                     *             }
                     *           ],
                     *           "total_rows": 1,
                     *           "counted_rows": 1,
                     *           "created_at": "2026-11-26T10:15:17.317Z",
                     *           "finished_at": "2026-11-26T10:15:17.373Z"
                     *         },
                     *         "download": {
                     *           "expires_at": "2026-11-26T10:25:20.319Z",
                     *           "manifest_url": "http://127.0.0.1:8787/blobs/exports/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/6e7f08fb-02f6-5411-a6c1-a3db5a70afd5/manifest.json?expires=1795688720&signature=6f1c0e6d9b1a4c5e8f7a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70",
                     *           "files": [
                     *             {
                     *               "name": "part-00001.parquet",
                     *               "url": "http://127.0.0.1:8787/blobs/exports/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/6e7f08fb-02f6-5411-a6c1-a3db5a70afd5/part-00001.parquet?expires=1795688720&signature=6f1c0e6d9b1a4c5e8f7a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70"
                     *             }
                     *           ]
                     *         }
                     *       },
                     *       "error": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["ExportWithLinks"];
                        error: string | null;
                    };
                };
            };
            /** @description A path parameter, query parameter or body field breaks a rule: `error` names the field and the rule */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No valid API key: send Authorization: Bearer <API_KEY> */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not found, or not the caller's organization's */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many requests: the key's rate limit (see Retry-After) or its organization's concurrent queries */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Internal error: `error` carries the request id */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Unavailable for now (the process is shutting down, a dependency is down); retry */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
}
