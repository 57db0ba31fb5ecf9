// Test files make kafkajs clients of their own (admins, consumers that read what was delivered):
// they get the same fix of kafkajs's idle request-queue timer as the services (see the module).
import '@hookbase/kafka';
