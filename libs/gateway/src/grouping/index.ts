export { GroupService } from './group-service.js';
