/** TypeScript declarations (`paths`, `components`, `operations`, `webhooks`) for an OpenAPI document. */
export declare function generateTypes(document: object): Promise<string>
