package dev.tally.smoke;

import dev.tally.client.ApiClient;
import dev.tally.client.ApiException;
import dev.tally.client.api.ExportsApi;
import dev.tally.client.api.PromptsApi;
import dev.tally.client.api.RequestsApi;
import dev.tally.client.api.SessionsApi;
import dev.tally.client.api.WebhooksApi;
import dev.tally.client.model.CreateExport201Response;
import dev.tally.client.model.CreateExportRequest;
import dev.tally.client.model.CreatePrompt201Response;
import dev.tally.client.model.CreatePromptRequest;
import dev.tally.client.model.CreateWebhookRequest;
import dev.tally.client.model.CreatedWebhook;
import dev.tally.client.model.FilterNode;
import dev.tally.client.model.LogEvent;
import dev.tally.client.model.LogRequests201Response;
import dev.tally.client.model.LogRequestsRequest;
import dev.tally.client.model.PromptBody;
import dev.tally.client.model.PromptBodyMessagesInner;
import dev.tally.client.model.PromptBodyMessagesInnerContent;
import dev.tally.client.model.QuerySessions200Response;
import dev.tally.client.model.QuerySessionsRequest;
import dev.tally.client.model.QuerySessionsRequestTimeFilter;
import dev.tally.client.model.RotateWebhookKey200ResponseData;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Smoke test of the java client generated from Tally's OpenAPI document, run by `npm run
 * clients:check` against a started Tally (TALLY_URL, TALLY_API_KEY): create a prompt (its version
 * 1.0), log a request, find its session, create a webhook and rotate its key, and create an export.
 * Exits 1 at the first step that does not answer as it should.
 */
public final class Smoke {
  private static void check(boolean ok, String what) {
    if (!ok) {
      System.err.println("smoke (java): " + what);
      System.exit(1);
    }
    System.out.println("java: " + what);
  }

  public static void main(String[] args) throws Exception {
    ApiClient client = new ApiClient();
    client.setBasePath(System.getenv("TALLY_URL"));
    client.setBearerToken(System.getenv("TALLY_API_KEY"));
    String run = UUID.randomUUID().toString().substring(0, 8);
    try {
      PromptBody body = new PromptBody()
          .model("gpt-4o-mini")
          .messages(List.of(new PromptBodyMessagesInner()
              .role("system")
              .content(new PromptBodyMessagesInnerContent("Say hi."))));
      CreatePrompt201Response prompt = new PromptsApi(client)
          .createPrompt(new CreatePromptRequest().name("smoke-java-" + run).promptBody(body));
      check(prompt.getData().getVersionId() != null, "created a prompt and its version 1.0");

      String sessionId = "smoke-java-" + run;
      LogEvent event = new LogEvent()
          .model("gpt-4o-mini")
          .provider("openai")
          .sessionId(sessionId)
          .request(Map.of("messages", List.of(Map.of("role", "user", "content", "Hi"))))
          .response(Map.of("choices", List.of()));
      LogRequests201Response logged = new RequestsApi(client).logRequests(new LogRequestsRequest(event));
      check(logged.getData().getRequestIds().size() == 1, "logged a request");

      SessionsApi sessions = new SessionsApi(client);
      long deadline = System.nanoTime() + 30_000_000_000L;
      while (true) {
        QuerySessions200Response found = sessions.querySessions(new QuerySessionsRequest()
            .timeFilter(new QuerySessionsRequestTimeFilter()
                .startTimeUnixMs(0L)
                .endTimeUnixMs(System.currentTimeMillis() + 60_000))
            .timezoneDifference(0)
            .search(sessionId)
            // "all": the generated FilterNode writes only its string alternative; it takes any
            // object for its untyped `{}` one and fails to write it.
            .filter(new FilterNode("all")));
        if (found.getData().stream().anyMatch(s -> sessionId.equals(s.getSessionId()))) break;
        if (System.nanoTime() > deadline) check(false, "session " + sessionId + " not found in 30 s");
        Thread.sleep(200);
      }
      check(true, "found the session of the request");

      WebhooksApi webhooks = new WebhooksApi(client);
      CreatedWebhook created = webhooks
          .createWebhook(new CreateWebhookRequest().destination("https://127.0.0.1:9/smoke"))
          .getData();
      RotateWebhookKey200ResponseData rotated = webhooks.rotateWebhookKey(created.getId().toString()).getData();
      check(
          rotated.getHmacKey() != null && !rotated.getHmacKey().equals(created.getHmacKey()),
          "created a webhook and rotated its key");

      Instant today = Instant.now().truncatedTo(ChronoUnit.DAYS);
      CreateExport201Response exported = new ExportsApi(client).createExport(new CreateExportRequest()
          .from(today.minus(1, ChronoUnit.DAYS).toString())
          .to(today.toString())
          .format(CreateExportRequest.FormatEnum.JSONL));
      check(exported.getData().getId() != null, "created an export");
    } catch (ApiException e) {
      check(false, e.getCode() + " " + e.getResponseBody());
    }
  }
}
